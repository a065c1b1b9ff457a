// SPDX-License-Identifier: GPL-2.0
/*
 * Physical page allocations of the target's processes, from the kmem page allocator
 * tracepoints (docs/physical.md).
 *
 * mm_page_alloc runs in the allocating task's context, so the task (and its user stack by
 * frame pointers) is the one whose fault or system call took the pages; an allocation of a
 * target process is sampled when a random u32 is below keep_below (--physical-memory-
 * probability), sent to the "events" ring buffer and its pfn kept in "tracked" with its
 * owner.  Pages are freed from any context (kswapd, another task, an interrupt), so the
 * free tracepoints look every pfn up in "tracked" whoever runs: a hit sends a free with the
 * owner's pid, a miss costs one failed look-up.  Losses are counted in "counters", never
 * silently dropped.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "physical_shared.h"

/* The target's cgroup (v2 id) when it is one (launch, a container): its every task;
 * else one target process compared directly; both 0: the "targets" map decides. */
const volatile __u64 target_cgroup = 0;
const volatile __u32 target_tgid = 0;
/* Sample when a random u32 is below this; 0 samples every allocation (probability 100). */
const volatile __u32 keep_below = 0;
const volatile __u64 wakeup_bytes = 1 << 20; /* wake collect when this much is pending */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PHYS_MAX_TARGETS);
	__type(key, __u32);
	__type(value, __u8);
} targets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PHYS_MAX_TRACKED);
	/* Entries come only with sampled blocks: preallocating the whole table would cost
	 * collect's start its clearing and memory charge. */
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);
	__type(value, struct phys_owner);
} tracked SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PHYS_C_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

static __always_inline void
count(__u32 c)
{
	__u64 *v = bpf_map_lookup_elem(&counters, &c);
	if (v)
		__sync_fetch_and_add(v, 1);
}

static __always_inline int
is_target(__u32 tgid)
{
	if (target_cgroup)
		return bpf_get_current_cgroup_id() == target_cgroup;
	if (target_tgid)
		return tgid == target_tgid;
	return bpf_map_lookup_elem(&targets, &tgid) != NULL;
}

static __always_inline __u64
ring_flags(void)
{
	return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes ?
		BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

SEC("tracepoint/kmem/mm_page_alloc")
int
page_alloc(struct trace_event_raw_mm_page_alloc *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = (__u32)(id >> 32);
	__u64 pfn = ctx->pfn;

	if (pfn == (__u64)-1 || !is_target(tgid))
		return 0;
	count(PHYS_C_ALLOCS);
	if (keep_below && bpf_get_prandom_u32() >= keep_below)
		return 0;
	struct phys_alloc_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(PHYS_C_RING_DROPS);
		return 0;
	}
	e->time = bpf_ktime_get_ns();
	e->kind = PHYS_EV_ALLOC;
	e->pid = tgid;
	e->tid = (__u32)id;
	e->pfn = pfn;
	e->order = ctx->order;
	e->flags = 0;
	struct phys_owner o = { tgid, ctx->order };
	if (bpf_map_update_elem(&tracked, &pfn, &o, BPF_ANY)) {
		count(PHYS_C_UNTRACKED);
		e->flags |= PHYS_EV_UNTRACKED;
	}
	long n = bpf_get_stack(ctx, e->ips, sizeof(e->ips), BPF_F_USER_STACK);
	if (n < 0) {
		count(PHYS_C_STACK_ERR);
		e->flags |= PHYS_EV_NO_STACK;
		n = 0;
	}
	e->nips = (__u32)(n / sizeof(__u64));
	bpf_ringbuf_submit(e, ring_flags());
	return 0;
}

/* A free of pfn from whatever context: only a tracked block is reported, with its owner. */
static __always_inline int
freed(__u64 pfn)
{
	struct phys_owner *o = bpf_map_lookup_elem(&tracked, &pfn);
	if (!o)
		return 0;
	struct phys_owner own = *o;
	bpf_map_delete_elem(&tracked, &pfn);
	struct phys_free_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(PHYS_C_RING_DROPS);
		return 0;
	}
	e->time = bpf_ktime_get_ns();
	e->kind = PHYS_EV_FREE;
	e->pid = own.pid;
	e->pfn = pfn;
	e->order = own.order;
	e->pad = 0;
	bpf_ringbuf_submit(e, ring_flags());
	return 0;
}

SEC("tracepoint/kmem/mm_page_free")
int
page_free(struct trace_event_raw_mm_page_free *ctx)
{
	return freed(ctx->pfn);
}

SEC("tracepoint/kmem/mm_page_free_batched")
int
page_free_batched(struct trace_event_raw_mm_page_free_batched *ctx)
{
	return freed(ctx->pfn);
}

char LICENSE[] SEC("license") = "GPL";
