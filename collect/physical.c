/*
 * The physical memory collector (collect/physical.h): bpf/physical.bpf.c on the kmem
 * tracepoints, its ring records written as page-alloc and page-free frames.
 */
#include "physical.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpfcount.h"
#include "bpflog.h"
#include "held.h"
#include "physical.skel.h"
#include "physical_shared.h"
#include "stream.h"

_Static_assert(sizeof(struct phys_alloc_event) % 8 == 0, "ring records stay 8-byte aligned");
_Static_assert(sizeof(struct phys_free_event) % 8 == 0, "ring records stay 8-byte aligned");
_Static_assert(PHYS_MAX_DEPTH <= STREAM_MAX_IPS, "a record's stack fits a frame");

struct physical {
	struct physical_bpf *skel;
	struct ring_buffer *rb;
	int ncpu, counters_fd;
	uint64_t counted[PHYS_C_MAX];   /* counter values already written as FR_LOST */
	uint64_t malformed;
	struct emit *out;               /* during a drain */
	struct fr_page_alloc fr;        /* scratch */
	void (*seen)(void *arg, uint32_t pid);
	void *arg;
	int hold;                       /* physical_hold: records go to held */
	struct held held;
};

#define HOLD_MAX (32u << 20)

static void
reason(int rc, const char *step, char *why, size_t whylen)
{
	const char *msg = bpflog_last();
	snprintf(why, whylen, "physical: cannot %s the page allocator program: %s%s%s%s", step,
		 strerror(rc < 0 ? -rc : rc ? rc : EINVAL), msg[0] ? " (libbpf: " : "", msg,
		 msg[0] ? ")" : "");
}

static int ring_event(void *ctx, void *data, size_t len);

/* The random u32 bound of a probability in percent; 0 (every allocation) at 100. */
static uint32_t
keep_below(unsigned probability)
{
	return probability >= 100 ? 0 : (uint32_t)(((uint64_t)probability << 32) / 100);
}

struct physical *
physical_open(const struct physical_config *cfg, char *why, size_t whylen)
{
	struct physical *p = calloc(1, sizeof(*p));
	if (!p) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	p->seen = cfg->seen;
	p->arg = cfg->arg;
	bpflog_reset(cfg->verbose);
	int rc = -EINVAL;
	const char *step = "load";
	if (!(p->skel = physical_bpf__open())) {
		rc = -errno;
		goto fail;
	}
	p->skel->rodata->target_tgid = (__u32)cfg->pid;
	p->skel->rodata->target_cgroup = cfg->cgroup_id;
	p->skel->rodata->keep_below = keep_below(cfg->probability);
	p->skel->rodata->wakeup_bytes = (1u << 22) / 2;
	if ((rc = physical_bpf__load(p->skel)) != 0)
		goto fail;
	p->ncpu = libbpf_num_possible_cpus();
	p->counters_fd = bpf_map__fd(p->skel->maps.counters);
	p->rb = ring_buffer__new(bpf_map__fd(p->skel->maps.events), ring_event, p, NULL);
	if (!p->rb || p->ncpu <= 0) {
		rc = p->ncpu <= 0 ? p->ncpu : -errno;
		goto fail;
	}
	step = "attach";
	if ((rc = physical_bpf__attach(p->skel)) != 0)
		goto fail;
	return p;
fail:
	reason(rc, step, why, whylen);
	physical_close(p);
	return NULL;
}

int
physical_add_process(struct physical *p, pid_t pid)
{
	__u32 k = (__u32)pid;
	__u8 one = 1;
	return bpf_map_update_elem(bpf_map__fd(p->skel->maps.targets), &k, &one, BPF_ANY) < 0 ?
		-1 : 0;
}

int
physical_fd(const struct physical *p)
{
	return bpf_map__fd(p->skel->maps.events);
}

static void
put_alloc(struct physical *p, const struct phys_alloc_event *e)
{
	struct fr_page_alloc *a = &p->fr;
	uint32_t n = e->nips > PHYS_MAX_DEPTH ? PHYS_MAX_DEPTH : e->nips;
	a->time = e->time;
	a->pid = e->pid;
	a->tid = e->tid;
	a->pfn = e->pfn;
	a->order = e->order;
	a->flags = e->flags & (PAGE_UNTRACKED | PAGE_NO_STACK);
	a->nuser = (uint16_t)n;
	memcpy(a->ips, e->ips, n * sizeof(a->ips[0]));
	if (p->seen)
		p->seen(p->arg, a->pid);
	emit_page_alloc(p->out, a);
}

static void write_record(struct physical *p, const void *data, size_t len);

/* The bytes of an allocation record up to its last return address. */
static size_t
used_len(const void *data, size_t len)
{
	const struct phys_alloc_event *e = data;
	if (len < sizeof(*e) || e->kind != PHYS_EV_ALLOC)
		return len;
	uint32_t n = e->nips > PHYS_MAX_DEPTH ? PHYS_MAX_DEPTH : e->nips;
	return offsetof(struct phys_alloc_event, ips) + n * sizeof(e->ips[0]);
}

static int
ring_event(void *ctx, void *data, size_t len)
{
	struct physical *p = ctx;
	if (p->hold)
		held_add(&p->held, data, used_len(data, len), offsetof(struct phys_alloc_event, ips));
	else
		write_record(p, data, len);
	return 0;
}

static void
write_record(struct physical *p, const void *data, size_t len)
{
	const struct phys_free_event *f = data;
	if (len < sizeof(*f) || f->order > STREAM_MAX_PAGE_ORDER) {
		p->malformed++;
		return;
	}
	if (f->kind == PHYS_EV_FREE) {
		struct fr_page_free v = { f->time, f->pid, f->pfn, f->order };
		emit_page_free(p->out, &v);
	} else if (f->kind == PHYS_EV_ALLOC && len >= sizeof(struct phys_alloc_event)) {
		put_alloc(p, data);
	} else {
		p->malformed++;
	}
}

/* The program's counters, summed over the CPUs, as FR_LOST of what grew. */
static void
put_counters(struct physical *p, uint64_t now)
{
	static const uint32_t kinds[PHYS_C_MAX] = {
		[PHYS_C_RING_DROPS] = LOST_PAGE_RING, [PHYS_C_UNTRACKED] = LOST_PAGE_UNTRACKED,
		[PHYS_C_STACK_ERR] = LOST_PAGE_STACK,
	};
	bpfcount_put(p->counters_fd, p->ncpu, kinds, PHYS_C_MAX, p->counted, p->out, now);
	if (p->malformed) {
		struct fr_lost l = { now, p->malformed, LOST_PAGE_RING };
		emit_lost(p->out, &l);
		p->malformed = 0;
	}
}

void
physical_drain(struct physical *p, struct emit *out, uint64_t now)
{
	p->out = out;
	ring_buffer__consume(p->rb);
	/* Held: the counters go out with what was held, at the release. */
	if (!p->hold)
		put_counters(p, now);
	p->out = NULL;
}

void
physical_hold(struct physical *p)
{
	p->hold = 1;
	p->held.max = HOLD_MAX;
}

/* A held record, whole again: the ring's fixed size with the stack it kept, or without
 * one when it was cut at the bound. */
static void
release_one(struct physical *p, const void *rec, size_t n, int cut)
{
	static struct phys_alloc_event scratch;
	memset(&scratch, 0, sizeof(scratch));
	memcpy(&scratch, rec, n);
	if (scratch.kind != PHYS_EV_ALLOC) {
		write_record(p, &scratch, n);
		return;
	}
	if (cut) {
		scratch.flags |= PHYS_EV_NO_STACK;
		scratch.nips = 0;
	}
	write_record(p, &scratch, sizeof(scratch));
}

void
physical_release(struct physical *p, struct emit *out, uint64_t until, uint64_t now)
{
	if (!p->hold)
		return;
	if (p->held.at == 0 || until == UINT64_MAX)
		ring_buffer__consume(p->rb);
	p->out = out;
	const void *rec;
	size_t n;
	int cut;
	while (held_next(&p->held, until, &rec, &n, &cut))
		release_one(p, rec, n, cut);
	if (until == UINT64_MAX) {
		p->hold = 0;
		if (p->held.cut) {
			struct fr_lost l = { now, p->held.cut, LOST_PAGE_STACK };
			emit_lost(out, &l);
		}
		p->malformed += p->held.failed;
		held_free(&p->held);
		p->out = NULL;
		physical_drain(p, out, now);
	}
	p->out = NULL;
}

void
physical_close(struct physical *p)
{
	if (!p)
		return;
	ring_buffer__free(p->rb);
	physical_bpf__destroy(p->skel);
	held_free(&p->held);
	free(p);
}
