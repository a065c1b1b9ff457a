/*
 * The records shared by bpf/physical.bpf.c and collect (after vmlinux.h on the BPF side,
 * <linux/types.h> in user space).  Layouts are fixed-size and naturally aligned.
 */
#ifndef RP_BPF_PHYSICAL_SHARED_H
#define RP_BPF_PHYSICAL_SHARED_H

#define PHYS_MAX_DEPTH 127        /* user return addresses per allocation, as perf's */
#define PHYS_MAX_TRACKED 524288   /* sampled page blocks tracked at once (2 GiB of 4 KiB) */
#define PHYS_MAX_TARGETS 16384    /* processes of the target at once */

enum phys_event_kind {
	PHYS_EV_ALLOC = 1,
	PHYS_EV_FREE,             /* a tracked block was freed, by whichever task */
};

#define PHYS_EV_UNTRACKED 1u      /* PAGE_UNTRACKED of lib/stream.h */
#define PHYS_EV_NO_STACK 2u       /* PAGE_NO_STACK */

/* What the tracked-page table keeps by pfn: whose pages they are and how many. */
struct phys_owner {
	__u32 pid, order;
};

struct phys_free_event {
	__u64 time;
	__u32 kind, pid;
	__u64 pfn;
	__u32 order, pad;
};

struct phys_alloc_event {
	__u64 time;
	__u32 kind, pid;
	__u64 pfn;
	__u32 order, tid;
	__u32 flags, nips;
	__u64 ips[PHYS_MAX_DEPTH];
};

/* Per-CPU counters ("counters" map); user space sums the CPUs. */
enum phys_counter {
	PHYS_C_RING_DROPS = 0,    /* ring buffer full: an allocation or a free lost */
	PHYS_C_UNTRACKED,         /* tracked table full: the block's free will not be seen */
	PHYS_C_STACK_ERR,         /* the user stack could not be walked */
	PHYS_C_ALLOCS,            /* page allocations of the target seen (before sampling) */
	PHYS_C_MAX,
};

#endif
