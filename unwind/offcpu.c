#include "offcpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fpstack.h"
#include "grow.h"

static const char *const roots[] = {
	[PHASE_BLOCKED] = "off-CPU blocked",
	[PHASE_PREEMPTED] = "scheduling delay (preempted)",
	[PHASE_YIELDED] = "scheduling delay (yielded)",
};

/* Location ids of the roots, by phase, made on first use (the resolver lives as long as
 * the process, and there is one). */
static uint32_t root_loc[4], root_mapping;

static struct str
S(const char *s)
{
	return (struct str){ s, (uint16_t)strlen(s) };
}

static uint32_t
root(struct resolver *r, uint32_t phase)
{
	if (root_loc[phase])
		return root_loc[phase];
	if (!root_mapping) {
		root_mapping = r->next_mapping_id++;
		struct fr_mapping m = { .id = root_mapping, .flags = MAPPING_HAS_FUNCTIONS,
					.path = S("[off-cpu]") };
		if (stream_put_mapping(r->out, &m) < 0)
			return 0;
	}
	/* The key format of resolve.c's functions: name, system name, file, start line. */
	char key[128];
	int n = snprintf(key, sizeof(key), "%s%c%s%c%c0", roots[phase], 0, roots[phase], 0, 0);
	int is_new;
	uint32_t fid = intern_text(&r->funcs, key, (size_t)n, &is_new);
	if (!fid)
		return 0;
	if (is_new) {
		struct fr_function f = { fid, 0, S(roots[phase]), S(roots[phase]), S("") };
		if (stream_put_function(r->out, &f) < 0)
			return 0;
	}
	static struct fr_location loc;
	memset(&loc, 0, sizeof(loc));
	loc.id = intern_add(&r->locs, root_mapping, phase);
	loc.mapping_id = root_mapping;
	loc.address = phase;
	loc.nlines = 1;
	loc.lines[0] = (struct fr_line){ fid, 0 };
	if (!loc.id || stream_put_location(r->out, &loc) < 0)
		return 0;
	return root_loc[phase] = loc.id;
}

/* The callers a frame-pointer walk skipped at the top of one interval's user stack: the
 * return addresses of the frameless functions from the leaf up, read from the words at the
 * stack pointer as their CFI says, up to the first function with a frame (from which the
 * walk is right) or the end of the words. */
#define MAX_SKIPPED 4
struct skipped {
	uint64_t ra[MAX_SKIPPED];
	uint32_t n;
};

static void
skipped_callers(struct resolver *r, struct dwarfstack *dw, const struct fr_offcpu *in,
		uint32_t interval, struct skipped *out)
{
	memset(out, 0, sizeof(*out));
	if (!in->ntop || !in->nuser)
		return;
	struct proc *p = proctab_get(&r->procs, in->pid);
	uint64_t pc = in->ips[in->nkernel], look = pc;
	int64_t sp = 0; /* of the current function, in bytes from the first word */
	while (p && out->n < MAX_SKIPPED) {
		struct map *m = proc_find(p, look);
		int cfa_off, ra_off;
		if (!m || dwarfstack_frameless(dw, r->sym, m, look, &cfa_off, &ra_off) < 0)
			break;
		int64_t at = sp + ra_off;
		if (at % 8 || at / 8 >= in->ntop)
			break;
		uint64_t ra = stream_offcpu_top(in, interval, (uint32_t)(at / 8));
		/* Not code of the process: stale words, not a return address. */
		if (!ra || !proc_find(p, ra - 1))
			break;
		/* Where the walk goes on by itself, the callers found so far are all it missed. */
		if (in->nuser > 1 && in->ips[in->nkernel + 1] == ra)
			break;
		out->ra[out->n++] = ra;
		sp += cfa_off;
		look = ra - 1;
	}
}

static int
same_callers(const struct skipped *a, const struct skipped *b)
{
	return a->n == b->n && memcmp(a->ra, b->ra, a->n * sizeof(a->ra[0])) == 0;
}

/* Writes intervals first and the nmore packed spans at more with the frame's stacks, the
 * skipped callers put back after the user leaf. */
static int
put_resolved(struct resolver *r, const struct fr_offcpu *in, const struct skipped *sk,
	     struct offcpu_span first, uint32_t nmore, const uint8_t *more,
	     struct stream_writer *out)
{
	static struct fr_sample s;
	static struct fr_stack st;
	static struct fr_offcpu_stack os;

	s.time = first.end;
	s.pid = in->pid;
	s.tid = in->tid;
	s.cpu = in->cpu;
	s.period = first.end - first.start;
	s.nkernel = in->nkernel;
	s.nuser = in->nuser;
	memcpy(s.ips, in->ips, ((size_t)in->nkernel + in->nuser) * sizeof(in->ips[0]));
	/* After the user leaf; at the limit the outermost frames make room. */
	size_t leaf = in->nkernel, total = leaf + in->nuser, k = sk->n;
	if (k && leaf + 1 + k > STREAM_MAX_IPS)
		k = STREAM_MAX_IPS - leaf - 1; /* nuser >= 1 when there are callers */
	if (k) {
		if (total + k > STREAM_MAX_IPS)
			total = STREAM_MAX_IPS - k;
		memmove(s.ips + leaf + 1 + k, s.ips + leaf + 1, (total - leaf - 1) * sizeof(s.ips[0]));
		memcpy(s.ips + leaf + 1, sk->ra, k * sizeof(s.ips[0]));
		s.nuser = (uint16_t)(total + k - leaf);
	}
	if (fpstack_resolve(r, &s, &st) < 0)
		return -1;
	uint32_t id = root(r, in->phase);
	if (!id)
		return -1;
	os = (struct fr_offcpu_stack){ .start = first.start, .end = first.end, .pid = in->pid,
				       .tid = in->tid, .cpu = in->cpu, .phase = in->phase,
				       .flags = first.flags, .stack_flags = st.flags,
				       .nmore = nmore, .more = more };
	/* The root goes last (the outermost frame); a stack at the limit loses its leaf. */
	unsigned keep = st.nlocs < STREAM_MAX_LOCS ? st.nlocs : STREAM_MAX_LOCS - 1;
	unsigned skip = st.nlocs - keep;
	memcpy(os.locs, st.locs + skip, keep * sizeof(st.locs[0]));
	os.locs[keep] = id;
	os.nlocs = (uint16_t)(keep + 1);
	return stream_put_offcpu_stack(out, &os);
}

struct by_caller {
	struct skipped sk;
	uint32_t i;
};

static int
cmp_caller(const void *a, const void *b)
{
	const struct by_caller *x = a, *y = b;
	if (x->sk.n != y->sk.n)
		return x->sk.n < y->sk.n ? -1 : 1;
	int c = memcmp(x->sk.ra, y->sk.ra, x->sk.n * sizeof(x->sk.ra[0]));
	if (c)
		return c;
	return x->i < y->i ? -1 : x->i > y->i;
}

int
offcpu_resolve(struct resolver *r, struct dwarfstack *dw, const struct fr_offcpu *in,
	       struct stream_writer *out)
{
	static struct by_caller *order;
	static uint8_t *spans;
	static size_t cap_order, cap_spans;
	uint32_t n = in->nmore + 1, i;
	struct skipped first, sk;

	skipped_callers(r, dw, in, 0, &first);
	for (i = 1; i < n; i++) {
		skipped_callers(r, dw, in, i, &sk);
		if (!same_callers(&sk, &first))
			break;
	}
	if (i == n) /* the same callers for all (the usual case): the frame as it came */
		return put_resolved(r, in, &first, stream_offcpu_span(in, 0), in->nmore, in->more,
				    out);
	/* Different callers: one frame each, intervals in their order. */
	if (grow_array((void **)&order, &cap_order, 0, n, sizeof(*order)) < 0 ||
	    grow_array((void **)&spans, &cap_spans, 0, (size_t)n * OFFCPU_SPAN_BYTES, 1) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		order[i].i = i;
		skipped_callers(r, dw, in, i, &order[i].sk);
	}
	qsort(order, n, sizeof(*order), cmp_caller);
	for (uint32_t from = 0, to; from < n; from = to) {
		for (to = from + 1; to < n && same_callers(&order[to].sk, &order[from].sk); to++) {
			struct offcpu_span sp = stream_offcpu_span(in, order[to].i);
			sp.flags &= OFFCPU_SPAN_FLAGS;
			stream_span_pack(spans, to - from - 1, &sp);
		}
		if (put_resolved(r, in, &order[from].sk, stream_offcpu_span(in, order[from].i),
				 to - from - 1, spans, out) < 0)
			return -1;
	}
	return 0;
}
