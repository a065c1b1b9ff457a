/*
 * The records shared by bpf/heap.bpf.c and collect/heap*.c (after vmlinux.h on the BPF
 * side, <linux/types.h> in user space).  Layouts are fixed-size and naturally aligned.
 */
#ifndef RP_BPF_HEAP_SHARED_H
#define RP_BPF_HEAP_SHARED_H

#define HEAP_MAX_DEPTH 127        /* user return addresses per allocation, as perf's */
#define HEAP_MAX_LIVE 262144      /* sampled blocks tracked at once (the live map) */
#define HEAP_MAX_PENDING 16384    /* threads inside an allocator call at once */
/* Under DWARF, the user stack copied at an allocator's return, as for a CPU sample. */
#define HEAP_DEEP_BYTES 16384
#define HEAP_NREGS 4              /* pc, sp, fp, lr (lr is 0 on x86_64) */

/* What an entry probe noted for its return probe (the "pending" map, by thread). */
enum heap_call {
	HEAP_CALL_ALLOC = 1,      /* malloc, __rust_alloc(_zeroed): noted when sampled only */
	HEAP_CALL_WRAPPER,        /* calloc, aligned_alloc: may call malloc, always noted */
	HEAP_CALL_REALLOC,        /* realloc, __rust_realloc: old may be a sampled block */
	HEAP_CALL_MEMALIGN,       /* posix_memalign: the block is stored at memptr */
};

struct heap_pending {
	__u64 sp;                 /* stack pointer at entry: tells a nested call from its caller */
	__u64 size, old, memptr;
	__u64 weight;             /* 0: not sampled */
	__u32 call, pad;
};

/* uprobe_multi's attach cookies: the argument layout of the function probed. */
enum heap_role {
	HEAP_ROLE_MALLOC = 1,     /* malloc, __rust_alloc(_zeroed) */
	HEAP_ROLE_CALLOC,
	HEAP_ROLE_REALLOC,
	HEAP_ROLE_ALIGNED_ALLOC,
	HEAP_ROLE_POSIX_MEMALIGN,
	HEAP_ROLE_RUST_REALLOC,
	HEAP_ROLE_FREE,           /* free, __rust_dealloc */
};

/* Ring records: a header, then the kind's payload. */
enum heap_event_kind {
	HEAP_EV_ALLOC = 1,
	HEAP_EV_FREE,             /* addr freed */
	HEAP_EV_MOVE,             /* addr moved to new_addr */
};

#define HEAP_EV_UNTRACKED 1u      /* ALLOC_UNTRACKED of lib/stream.h */
#define HEAP_EV_NO_STACK 2u       /* ALLOC_NO_STACK */

struct heap_free_event {
	__u64 time;
	__u32 kind, tid;
	__u64 addr, new_addr;
};

struct heap_alloc_event {
	__u64 time;
	__u32 kind, tid;
	__u64 addr, size, weight;
	__u32 flags, nips;
	__u64 ips[HEAP_MAX_DEPTH];
};

/* Under DWARF: the registers at the return and the stack above sp (len bytes of it). */
struct heap_deep_event {
	struct heap_alloc_event e;
	__u64 regs[HEAP_NREGS];
	__u32 stack_len, pad;
	__u8 stack[HEAP_DEEP_BYTES];
};

/* Per-CPU counters ("counters" map); user space sums the CPUs. */
enum heap_counter {
	HEAP_C_RING_DROPS = 0,    /* ring buffer full: an allocation, free or move lost */
	HEAP_C_EVICTED,           /* live map full: the sample is not tracked as live */
	HEAP_C_UNFINISHED,        /* a call whose return never came */
	HEAP_C_STACK_ERR,         /* the user stack could not be walked or copied */
	HEAP_C_CALLS,             /* allocator calls seen (entries) */
	HEAP_C_MAX,
};

#endif
