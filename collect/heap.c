/*
 * Loading the heap program, attaching its probes and draining its ring buffer.
 */
#include "heap.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpfcount.h"
#include "bpflog.h"
#include "heap.skel.h"
#include "heap_shared.h"
#include "held.h"
#include "kernver.h"
#include "stream.h"
#include "uprobe.h"

/* Linux 6.6's uprobe_multi link, which Debian 12's headers predate: its attach type and
 * return flag, and its part of BPF_LINK_CREATE's attributes, as the kernel lays them out. */
#define UPROBE_MULTI_ATTACH 48          /* BPF_TRACE_UPROBE_MULTI */
#define UPROBE_MULTI_RETURN 1u          /* BPF_F_UPROBE_MULTI_RETURN */
struct uprobe_multi_attr {
	uint32_t prog_fd, target_fd, attach_type, flags;
	uint64_t path, offsets, ref_ctr_offsets, cookies;
	uint32_t cnt, multi_flags, pid, pad;
};
_Static_assert(offsetof(struct uprobe_multi_attr, path) == 16 &&
	       offsetof(struct uprobe_multi_attr, pid) == 56, "the kernel's layout");

_Static_assert(sizeof(struct heap_alloc_event) % 8 == 0, "ring records stay 8-byte aligned");
_Static_assert(sizeof(struct heap_deep_event) % 8 == 0, "ring records stay 8-byte aligned");

#define MAX_LINKS (2 * HF_MAX)

struct heap {
	struct heap_bpf *skel;
	struct ring_buffer *rb;
	struct bpf_link *links[MAX_LINKS];
	struct uprobe probes[MAX_LINKS];  /* links[i] runs on probes[i] */
	int nlinks, ncpu, counters_fd;
	int multi[2];                   /* uprobe_multi: the entries' and returns' links, or -1 */
	uint32_t pid;
	uint64_t counted[HEAP_C_MAX];   /* counter values already written as FR_LOST */
	uint64_t malformed;
	struct emit *out;               /* during a drain */
	void (*judge)(void *arg, uint64_t time, const uint64_t *ips, unsigned n);
	void *arg;
	struct stacktop *top;
	struct fr_alloc fr;             /* scratch */
	/* While held (heap_hold): the ring's records, each cut to its stack_len, up to
	 * HOLD_MAX bytes; past that an allocation keeps only its frame-pointer part. */
	int hold;
	struct held held;
};

#define HOLD_MAX (32u << 20)

static void
reason(int rc, const char *step, const char *what, char *why, size_t whylen)
{
	const char *msg = bpflog_last();
	snprintf(why, whylen, "heap: cannot %s %s: %s%s%s%s", step, what,
		 strerror(rc < 0 ? -rc : rc ? rc : EINVAL), msg[0] ? " (libbpf: " : "", msg,
		 msg[0] ? ")" : "");
}

/* Function f's argument layout: which entry program runs at it (a uprobe each), or the
 * cookie its probes carry (uprobe_multi). */
static enum heap_role
role(enum heap_fn f)
{
	switch (f) {
	case HF_MALLOC: case HF_RUST_ALLOC: case HF_RUST_ALLOC_ZEROED: return HEAP_ROLE_MALLOC;
	case HF_CALLOC: return HEAP_ROLE_CALLOC;
	case HF_REALLOC: return HEAP_ROLE_REALLOC;
	case HF_RUST_REALLOC: return HEAP_ROLE_RUST_REALLOC;
	case HF_ALIGNED_ALLOC: return HEAP_ROLE_ALIGNED_ALLOC;
	case HF_POSIX_MEMALIGN: return HEAP_ROLE_POSIX_MEMALIGN;
	default: return HEAP_ROLE_FREE;
	}
}

/* free has no return probe. */
static int
has_return(enum heap_fn f)
{
	return role(f) != HEAP_ROLE_FREE;
}

/* The entry program of a uprobe on f. */
static struct bpf_program *
entry_prog(struct heap_bpf *s, enum heap_fn f, int empty)
{
	if (empty)
		return s->progs.heap_empty;
	switch (role(f)) {
	case HEAP_ROLE_MALLOC: return s->progs.heap_malloc;
	case HEAP_ROLE_CALLOC: return s->progs.heap_calloc;
	case HEAP_ROLE_REALLOC: return s->progs.heap_realloc;
	case HEAP_ROLE_RUST_REALLOC: return s->progs.heap_rust_realloc;
	case HEAP_ROLE_ALIGNED_ALLOC: return s->progs.heap_aligned_alloc;
	case HEAP_ROLE_POSIX_MEMALIGN: return s->progs.heap_posix_memalign;
	default: return s->progs.heap_free;
	}
}

/* The return program of a uprobe on f: heap_ret for all but posix_memalign's. */
static struct bpf_program *
ret_prog(struct heap_bpf *s, enum heap_fn f, int empty)
{
	return empty ? s->progs.heap_empty : role(f) == HEAP_ROLE_POSIX_MEMALIGN ?
	       s->progs.heap_ret_memalign : s->progs.heap_ret;
}

static int
attach_one(struct heap *h, struct bpf_program *prog, const char *path, uint64_t off,
	   int ret, const char *name, char *why, size_t whylen)
{
	struct uprobe *u = &h->probes[h->nlinks];
	if (uprobe_open(u, path, off, ret, name, (pid_t)h->pid, why, whylen) < 0)
		return -1;
	struct bpf_link *l = bpf_program__attach_perf_event(prog, u->fd);
	if (!l) {
		reason(-errno, "attach", name, why, whylen);
		uprobe_remove(u, 1);
		return -1;
	}
	/* The link owns the event's fd from here on. */
	h->links[h->nlinks++] = l;
	return 0;
}

static int
attach_all(struct heap *h, const struct heap_probe *p, int empty, char *why, size_t whylen)
{
	for (int f = 0; f < HF_MAX; f++) {
		if (!p->offset[f])
			continue;
		const char *nm = heapsym_name((enum heap_fn)f);
		if (attach_one(h, entry_prog(h->skel, (enum heap_fn)f, empty), p->open_path,
			       p->offset[f], 0, nm, why, whylen) < 0)
			return -1;
		if (has_return((enum heap_fn)f) &&
		    attach_one(h, ret_prog(h->skel, (enum heap_fn)f, empty), p->open_path,
			       p->offset[f], 1, nm, why, whylen) < 0)
			return -1;
	}
	return 0;
}

/* One uprobe_multi link of prog at the n offsets of path, for the target's threads; its fd,
 * or -1 with the reason. */
static int
link_multi(struct heap *h, struct bpf_program *prog, const char *path, const uint64_t *offs,
	   const uint64_t *cookies, uint32_t n, int ret, char *why, size_t whylen)
{
	struct uprobe_multi_attr a = {
		.prog_fd = (uint32_t)bpf_program__fd(prog), .attach_type = UPROBE_MULTI_ATTACH,
		.path = (uint64_t)(uintptr_t)path, .offsets = (uint64_t)(uintptr_t)offs,
		.cookies = (uint64_t)(uintptr_t)cookies, .cnt = n,
		.multi_flags = ret ? UPROBE_MULTI_RETURN : 0, .pid = h->pid,
	};
	int fd = (int)syscall(SYS_bpf, BPF_LINK_CREATE, &a, sizeof(a));
	if (fd < 0)
		snprintf(why, whylen, "heap: cannot attach the allocator's %s probes to %.300s "
			 "(uprobe_multi): %s", ret ? "return" : "entry", path, strerror(errno));
	return fd;
}

/* Every function's entry in one link, every return in another; the cookies say which. */
static int
attach_multi(struct heap *h, const struct heap_probe *p, int empty, char *why, size_t whylen)
{
	uint64_t eo[HF_MAX], ec[HF_MAX], ro[HF_MAX], rc[HF_MAX];
	uint32_t ne = 0, nr = 0;
	for (int f = 0; f < HF_MAX; f++) {
		if (!p->offset[f])
			continue;
		eo[ne] = p->offset[f];
		ec[ne++] = role((enum heap_fn)f);
		if (has_return((enum heap_fn)f)) {
			ro[nr] = p->offset[f];
			rc[nr++] = role((enum heap_fn)f);
		}
	}
	struct bpf_program *in = empty ? h->skel->progs.heap_empty : h->skel->progs.heap_entry_multi;
	struct bpf_program *out = empty ? h->skel->progs.heap_empty : h->skel->progs.heap_ret_multi;
	if (ne && (h->multi[0] = link_multi(h, in, p->open_path, eo, ec, ne, 0, why, whylen)) < 0)
		return -1;
	if (nr && (h->multi[1] = link_multi(h, out, p->open_path, ro, rc, nr, 1, why, whylen)) < 0)
		return -1;
	return 0;
}

/* Only the programs the probes of p will run are loaded (each costs the verifier's time);
 * p NULL: every one of the way chosen (check's load probe). */
static void
choose_programs(struct heap_bpf *s, const struct heap_probe *p, int multi, int empty)
{
	struct bpf_program *prog;
	bpf_object__for_each_program(prog, s->obj)
		bpf_program__set_autoload(prog, false);
	if (empty) {
		bpf_program__set_autoload(s->progs.heap_empty, true);
	} else if (multi) {
		bpf_program__set_autoload(s->progs.heap_entry_multi, true);
		bpf_program__set_autoload(s->progs.heap_ret_multi, true);
	} else {
		for (int f = 0; f < HF_MAX; f++) {
			if (p && !p->offset[f])
				continue;
			bpf_program__set_autoload(entry_prog(s, (enum heap_fn)f, 0), true);
			if (has_return((enum heap_fn)f))
				bpf_program__set_autoload(ret_prog(s, (enum heap_fn)f, 0), true);
		}
	}
	if (multi) {
		bpf_object__for_each_program(prog, s->obj)
			bpf_program__set_expected_attach_type(prog,
				(enum bpf_attach_type)UPROBE_MULTI_ATTACH);
	}
}

static int ring_event(void *ctx, void *data, size_t len);

struct heap *
heap_open(pid_t pid, const struct heap_probe *p, const struct heap_config *cfg, char *why,
	  size_t whylen)
{
	int multi = cfg->uprobes == HEAP_UPROBES_MULTI;
	/* Before Linux 6.12 uprobe_multi's process filter let the attaching thread alone
	 * through: the target's other threads' allocations would go unseen. */
	if (multi && kernel_below(6, 12, "heap: --uprobes multi", "", why, whylen))
		return NULL;
	struct heap *h = calloc(1, sizeof(*h));
	if (!h) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	h->multi[0] = h->multi[1] = -1;
	bpflog_reset(cfg->verbose);
	h->pid = (uint32_t)pid;
	h->judge = cfg->judge;
	h->arg = cfg->arg;
	h->top = cfg->top;
	int rc = -EINVAL;
	if (!(h->skel = heap_bpf__open())) {
		rc = -errno;
		goto fail;
	}
	h->skel->rodata->target_tgid = (__u32)pid;
	h->skel->rodata->interval = cfg->interval;
	h->skel->bss->dwarf = cfg->dwarf != 0;
	h->skel->rodata->wakeup_bytes = (1u << 22) / 2;
	choose_programs(h->skel, p, multi, cfg->empty);
	/* A uprobe each is made in tracefs, where a killed collect leaves its own. */
	if (!multi)
		uprobe_sweep();
	if ((rc = heap_bpf__load(h->skel)) != 0)
		goto fail;
	h->ncpu = libbpf_num_possible_cpus();
	h->counters_fd = bpf_map__fd(h->skel->maps.counters);
	h->rb = ring_buffer__new(bpf_map__fd(h->skel->maps.events), ring_event, h, NULL);
	if (!h->rb || h->ncpu <= 0) {
		rc = h->ncpu <= 0 ? h->ncpu : -errno;
		goto fail;
	}
	if ((multi ? attach_multi(h, p, cfg->empty, why, whylen) :
		     attach_all(h, p, cfg->empty, why, whylen)) < 0) {
		heap_close(h);
		return NULL;
	}
	return h;
fail:
	reason(rc, "load", "the allocator program", why, whylen);
	heap_close(h);
	return NULL;
}

int
heap_load_probe(pid_t pid, char *why, size_t whylen)
{
	bpflog_reset(0);
	struct heap_bpf *skel = heap_bpf__open();
	int rc = skel ? 0 : -errno;
	if (skel) {
		skel->rodata->target_tgid = (__u32)pid;
		choose_programs(skel, NULL, 0, 0);
		rc = heap_bpf__load(skel);
	}
	if (rc != 0)
		reason(rc, "load", "the allocator program", why, whylen);
	heap_bpf__destroy(skel);
	return rc != 0 ? -1 : 0;
}

int
heap_fd(const struct heap *h)
{
	return bpf_map__fd(h->skel->maps.events);
}

static void
put_alloc(struct heap *h, const struct heap_alloc_event *e, const struct heap_deep_event *d)
{
	struct fr_alloc *a = &h->fr;
	uint32_t n = e->nips > HEAP_MAX_DEPTH ? HEAP_MAX_DEPTH : e->nips;
	a->time = e->time;
	a->pid = h->pid;
	a->tid = e->tid;
	a->addr = e->addr;
	a->size = e->size;
	a->weight = e->weight;
	a->flags = e->flags & (ALLOC_UNTRACKED | ALLOC_NO_STACK);
	a->nuser = (uint16_t)n;
	memcpy(a->ips, e->ips, n * sizeof(a->ips[0]));
	a->abi = 0;
	a->nregs = 0;
	a->reg_mask = 0;
	a->stack_len = 0;
	a->stack = NULL;
	if (d) {
		/* Only pc, sp and the frame pointer (aarch64: and lr) start unwind's walk. */
#if defined(__x86_64__)
		static const unsigned bits[] = { 8, 7, 6 };
#else
		static const unsigned bits[] = { 32, 31, 29, 30 };
#endif
		/* In ascending bit order, as the regs of a perf sample. */
		uint64_t v[4] = { d->regs[0], d->regs[1], d->regs[2], d->regs[3] };
		a->abi = 2;
		for (unsigned i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
			a->reg_mask |= 1ull << bits[i];
		for (unsigned b = 0, k = 0; b < 64; b++)
			for (unsigned i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
				if (bits[i] == b)
					a->regs[k++] = v[i];
		a->nregs = (uint16_t)(sizeof(bits) / sizeof(bits[0]));
		a->stack_len = d->stack_len > HEAP_DEEP_BYTES ? HEAP_DEEP_BYTES : d->stack_len;
		a->stack = d->stack;
		if (h->top)
			a->stack_len = stacktop_trim(h->top, h->pid, v[1], a->stack, a->stack_len);
	}
	if (h->judge)
		h->judge(h->arg, a->time, a->ips, a->nuser);
	emit_alloc(h->out, a);
}

/* One record of the ring, written as frames. */
static void
write_record(struct heap *h, const void *data, size_t len)
{
	const struct heap_free_event *f = data;
	if (len < sizeof(*f)) {
		h->malformed++;
		return;
	}
	if (f->kind == HEAP_EV_FREE || f->kind == HEAP_EV_MOVE) {
		struct fr_heap_free v = { f->time, h->pid, f->tid, f->addr,
					  f->kind == HEAP_EV_MOVE ? f->new_addr : 0 };
		if (v.addr)
			emit_heap_free(h->out, &v);
		return;
	}
	if (f->kind != HEAP_EV_ALLOC || len < sizeof(struct heap_alloc_event) ||
	    !((const struct heap_alloc_event *)data)->weight) {
		h->malformed++;
		return;
	}
	put_alloc(h, data, len >= sizeof(struct heap_deep_event) ? data : NULL);
}

static int hold_record(struct heap *h, const void *data, size_t len);

static int
ring_event(void *ctx, void *data, size_t len)
{
	struct heap *h = ctx;
	if (h->hold)
		return hold_record(h, data, len);
	write_record(h, data, len);
	return 0;
}

/* The program's counters, summed over the CPUs, as FR_LOST of what grew. */
static void
put_counters(struct heap *h, uint64_t now)
{
	static const uint32_t kinds[HEAP_C_MAX] = {
		[HEAP_C_RING_DROPS] = LOST_HEAP_RING, [HEAP_C_EVICTED] = LOST_HEAP_EVICTED,
		[HEAP_C_UNFINISHED] = LOST_HEAP_UNFINISHED, [HEAP_C_STACK_ERR] = LOST_HEAP_STACK,
	};
	bpfcount_put(h->counters_fd, h->ncpu, kinds, HEAP_C_MAX, h->counted, h->out, now);
	if (h->malformed) {
		struct fr_lost l = { now, h->malformed, LOST_HEAP_RING };
		emit_lost(h->out, &l);
		h->malformed = 0;
	}
}

void
heap_drain(struct heap *h, struct emit *out, uint64_t now)
{
	h->out = out;
	ring_buffer__consume(h->rb);
	/* Held: the counters go out with what was held, at the release. */
	if (!h->hold)
		put_counters(h, now);
	h->out = NULL;
}

/* The bytes of a record worth keeping: a deep one up to the stack it copied. */
static size_t
kept_len(const void *data, size_t len)
{
	const struct heap_deep_event *d = data;
	if (len < sizeof(*d))
		return len;
	size_t n = d->stack_len > HEAP_DEEP_BYTES ? HEAP_DEEP_BYTES : d->stack_len;
	return offsetof(struct heap_deep_event, stack) + n;
}

static int
hold_record(struct heap *h, const void *data, size_t len)
{
	held_add(&h->held, data, kept_len(data, len), sizeof(struct heap_alloc_event));
	return 0;
}

void
heap_hold(struct heap *h)
{
	h->hold = 1;
	h->held.max = HOLD_MAX;
}

/* A held record as the ring gave it: a deep one whole again, or, when its stack copies
 * are not wanted, its frame-pointer part. */
static void
release_one(struct heap *h, const unsigned char *rec, size_t n, int cut, int deep)
{
	static struct heap_deep_event scratch;
	const struct heap_alloc_event *e = (const void *)rec;
	if (n < sizeof(*e) || e->kind != HEAP_EV_ALLOC) {
		memcpy(&scratch, rec, n);
		write_record(h, &scratch, n);
		return;
	}
	if (deep && cut) {
		/* Cut at the hold's bound: its frame-pointer stack is not the DWARF walk
		 * the recording chose, so the allocation counts without a stack. */
		memcpy(&scratch.e, rec, sizeof(*e));
		scratch.e.flags |= ALLOC_NO_STACK;
		scratch.e.nips = 0;
		write_record(h, &scratch, sizeof(*e));
		return;
	}
	memcpy(&scratch, rec, n);
	write_record(h, &scratch, deep ? sizeof(scratch) : sizeof(*e));
}

/* The held records up to time until (all: UINT64_MAX), in the order held. */
static void
release_upto(struct heap *h, int deep, uint64_t until)
{
	const void *rec;
	size_t n;
	int cut;
	while (held_next(&h->held, until, &rec, &n, &cut))
		release_one(h, rec, n, cut, deep);
}

uint64_t
heap_release(struct heap *h, struct emit *out, int deep, uint64_t until, uint64_t now)
{
	if (!h->hold)
		return 0;
	/* What the ring still has joins the held records: at the first call, and the last. */
	if (h->held.at == 0 || until == UINT64_MAX)
		ring_buffer__consume(h->rb);
	h->out = out;
	release_upto(h, deep, until);
	if (until != UINT64_MAX) {
		h->out = NULL;
		return 0;
	}
	h->hold = 0;
	heap_set_dwarf(h, deep);
	if (deep && h->held.cut) {
		struct fr_lost l = { now, h->held.cut, LOST_HEAP_STACK };
		emit_lost(out, &l);
	}
	uint64_t cut = h->held.cut;
	h->malformed += h->held.failed;
	held_free(&h->held);
	h->out = NULL;
	heap_drain(h, out, now);
	return cut;
}

void
heap_set_dwarf(struct heap *h, int on)
{
	h->skel->bss->dwarf = on != 0;
}

size_t
heap_take_live(struct heap *to, const struct heap *from)
{
	int src = bpf_map__fd(from->skel->maps.live), dst = bpf_map__fd(to->skel->maps.live);
	uint64_t key, next;
	uint8_t v;
	size_t n = 0;
	for (int more = bpf_map_get_next_key(src, NULL, &next) == 0; more;
	     more = bpf_map_get_next_key(src, &key, &next) == 0) {
		key = next;
		if (bpf_map_lookup_elem(src, &key, &v) == 0 &&
		    bpf_map_update_elem(dst, &key, &v, BPF_NOEXIST) == 0)
			n++;
	}
	return n;
}

void
heap_close(struct heap *h)
{
	if (!h)
		return;
	for (int i = 0; i < h->nlinks; i++) {
		bpf_link__destroy(h->links[i]);
		uprobe_remove(&h->probes[i], 0);
	}
	for (int i = 0; i < 2; i++)
		if (h->multi[i] >= 0)
			close(h->multi[i]);
	ring_buffer__free(h->rb);
	heap_bpf__destroy(h->skel);
	held_free(&h->held);
	free(h);
}
