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
_Static_assert(STREAM_MAX_TOP <= 32, "struct skipped marks the words read in 32 bits");
struct skipped {
	uint64_t ra[MAX_SKIPPED];
	uint32_t n;
	uint32_t read;          /* bit w: word w was read (the result depends on no other) */
};

static void
skipped_callers(struct resolver *r, struct dwarfstack *dw, const struct fr_offcpu *in,
		uint32_t interval, struct skipped *out)
{
	memset(out, 0, sizeof(*out));
	if (!in->ntop || !in->nuser)
		return;
	struct proc *p = proctab_find(&r->procs, in->pid);
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
		out->read |= 1u << (at / 8);
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

/* Whether interval i has the words that interval j's walk (sk) read: then its walk reads
 * the same and finds the same callers, and is not done again (a thread that blocks at one
 * place has the same return addresses there each time, whatever its locals beside them). */
static int
same_words(const struct fr_offcpu *in, uint32_t i, uint32_t j, const struct skipped *sk)
{
	for (uint32_t w = 0; w < in->ntop; w++)
		if (sk->read & (1u << w) &&
		    stream_offcpu_top(in, i, w) != stream_offcpu_top(in, j, w))
			return 0;
	return 1;
}

static int
same_callers(const struct skipped *a, const struct skipped *b)
{
	return a->n == b->n && memcmp(a->ra, b->ra, a->n * sizeof(a->ra[0])) == 0;
}

/* The user stack of the frame with the skipped callers put back after the leaf, in
 * uips; returns its length (at most max). */
static size_t
mended(const struct fr_offcpu *in, const struct skipped *sk, uint64_t *uips, size_t max)
{
	const uint64_t *u = in->ips + in->nkernel;
	size_t n = 0;
	for (size_t i = 0; i < in->nuser && n < max; i++) {
		uips[n++] = u[i];
		for (uint32_t k = 0; i == 0 && k < sk->n && n < max; k++)
			uips[n++] = sk->ra[k];
	}
	return n;
}

/* The user stack walked with the CFI over the frame's stack copy (a thread whose frame
 * pointer was not one), continued where the copy ends by the kernel's frame-pointer chain
 * if that chain holds the copy's last frame; 0 when the walk gives no more than the leaf. */
static size_t
walked(struct resolver *r, struct dwarfstack *dw, const struct fr_offcpu *in, uint64_t *uips,
       size_t max)
{
	static struct fr_sample_regs sr;
	static struct dwframe fr[DW_MAX_FRAMES];
	if (!in->nstack || !in->nuser || dw->machine != 62) /* the registers are x86_64's */
		return 0;
	memset(&sr, 0, sizeof(sr));
	sr.pid = in->pid;
	sr.tid = in->tid;
	sr.abi = 2;
	sr.reg_mask = 1ull << DW_PERF_X86_BP | 1ull << DW_PERF_X86_SP | 1ull << DW_PERF_X86_IP;
	sr.regs[sr.nregs++] = in->bp;
	sr.regs[sr.nregs++] = in->sp;
	sr.regs[sr.nregs++] = in->ips[in->nkernel];
	sr.stack = in->stack;
	sr.stack_len = in->nstack;
	int end;
	struct proc *p = proctab_find(&r->procs, in->pid);
	unsigned n = dwarfstack_walk(dw, r->sym, p, &sr, fr, max < DW_MAX_FRAMES ? (unsigned)max :
							       DW_MAX_FRAMES, &end);
	if (n <= 1)
		return 0;
	size_t nu = 0;
	for (unsigned i = 0; i < n; i++)
		uips[nu++] = fr[i].pc;
	const uint64_t *u = in->ips + in->nkernel;
	for (size_t j = 1; end == DW_END_STACK && j < in->nuser; j++)
		if (u[j] == fr[n - 1].pc) {
			for (j++; j < in->nuser && nu < max; j++)
				uips[nu++] = u[j];
			break;
		}
	return nu;
}

/* Writes interval first and the nmore packed spans at more with the frame's kernel stack
 * and the user stack uips. */
static int
put_resolved(struct resolver *r, const struct fr_offcpu *in, const uint64_t *uips, size_t nu,
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
	s.nuser = (uint16_t)nu;
	memcpy(s.ips, in->ips, in->nkernel * sizeof(in->ips[0]));
	memcpy(s.ips + in->nkernel, uips, nu * sizeof(uips[0]));
	if (fpstack_resolve(r, &s, &st) < 0)
		return -1;
	/* The spans share the stack: none of its mappings is forgotten before the last ends. */
	for (uint32_t i = 0; i < nmore; i++)
		resolver_saw(r, stream_span_unpack(more, i).end);
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
	static uint64_t uips[STREAM_MAX_IPS];
	static size_t cap_order, cap_spans;
	size_t max = STREAM_MAX_IPS - in->nkernel, nu;
	uint32_t n = in->nmore + 1, i;

	/* A stack copy comes with one interval. */
	if ((nu = walked(r, dw, in, uips, max)) > 0)
		return put_resolved(r, in, uips, nu, stream_offcpu_span(in, 0), 0, NULL, out);
	if (grow_array((void **)&order, &cap_order, 0, n, sizeof(*order)) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		order[i].i = i;
		if (i > 0 && same_words(in, i, i - 1, &order[i - 1].sk))
			order[i].sk = order[i - 1].sk;
		else
			skipped_callers(r, dw, in, i, &order[i].sk);
	}
	for (i = 1; i < n && same_callers(&order[i].sk, &order[0].sk); i++)
		;
	if (i == n) { /* the same callers for all (the usual case): the frame as it came */
		nu = mended(in, &order[0].sk, uips, max);
		return put_resolved(r, in, uips, nu, stream_offcpu_span(in, 0), in->nmore, in->more,
				    out);
	}
	/* Different callers: one frame each, intervals in their order. */
	if (grow_array((void **)&spans, &cap_spans, 0, (size_t)n * OFFCPU_SPAN_BYTES, 1) < 0)
		return -1;
	qsort(order, n, sizeof(*order), cmp_caller);
	for (uint32_t from = 0, to; from < n; from = to) {
		for (to = from + 1; to < n && same_callers(&order[to].sk, &order[from].sk); to++) {
			struct offcpu_span sp = stream_offcpu_span(in, order[to].i);
			sp.flags &= OFFCPU_SPAN_FLAGS;
			stream_span_pack(spans, to - from - 1, &sp);
		}
		nu = mended(in, &order[from].sk, uips, max);
		if (put_resolved(r, in, uips, nu, stream_offcpu_span(in, order[from].i),
				 to - from - 1, spans, out) < 0)
			return -1;
	}
	return 0;
}
