/*
 * The records shared by bpf/offcpu.bpf.c and collect/offcpu*.c.  Both sides include this
 * header: the BPF side after vmlinux.h, user space after <linux/types.h>, so only the
 * __u64-style types of both are used.  Layouts are fixed-size and naturally aligned.
 */
#ifndef RP_BPF_OFFCPU_SHARED_H
#define RP_BPF_OFFCPU_SHARED_H

#define OFFCPU_MAX_DEPTH 127      /* addresses per stack, as the perf callchains */
#define OFFCPU_MAX_TARGETS 1024   /* target processes (tgids) */
#define OFFCPU_MAX_THREADS 16384  /* target threads with an entry (from a switch-out to exit) */
#define OFFCPU_STACK_SLOTS 16384  /* distinct stacks in the stack-trace map */
/* User stacks the program walks itself (Linux 5.15+, which has bpf_task_pt_regs; before,
 * bpf_get_stackid walks them into the stack-trace map): a table of OFFCPU_USTACK_SLOTS
 * stacks, each in one of the OFFCPU_USTACK_PROBES slots after its hash.  A stack id at or
 * above OFFCPU_STACK_SLOTS names slot id - OFFCPU_STACK_SLOTS of this table; a slot, once
 * taken, keeps its stack. */
#define OFFCPU_USTACK_SLOTS 16384
#define OFFCPU_USTACK_PROBES 4
/* Words read at the user stack pointer at a switch-out (x86_64; all zero elsewhere or when
 * the read fails): the return address of a leaf function without a frame, which the
 * frame-pointer walk skips, is among them (unwind picks it with the leaf's CFI). */
#define OFFCPU_TOP_WORDS 8
/* When the frame-pointer register does not point into the stack above the stack pointer
 * (glibc's condition-variable wait uses it as a general register), the kernel's walk ends
 * at the leaf: then the first OFFCPU_DEEP_BYTES of the user stack are copied too, for
 * unwind to walk with the CFI, for at most OFFCPU_MAX_DEEP threads off the CPU at once. */
#define OFFCPU_DEEP_BYTES 512
#define OFFCPU_MAX_DEEP 4096
/* --cpuid: CPUs below this, a bit each (as lib/cpulist.h's CPULIST_MAX). */
#define OFFCPU_MAX_CPUS 4096

struct offcpu_ustack {
	__u64 hash;
	__u32 nr, pad;
	__u64 ips[OFFCPU_MAX_DEPTH];
};

struct offcpu_deep {
	__u64 ts;                 /* the switch-out's: the interval the copy belongs to */
	__u64 sp, bp;             /* the user registers at the switch-out */
	__u8 stack[OFFCPU_DEEP_BYTES];
};

/* Why a thread left the CPU. */
enum offcpu_phase {
	OFFCPU_BLOCKED = 1,       /* it waited for something (sleep, I/O, lock, futex) */
	OFFCPU_PREEMPTED = 2,     /* runnable, taken off: preemption, resched on return */
	OFFCPU_YIELDED = 3,       /* runnable, in its own sched_yield */
};

/* Phase selection (the rodata "phases" mask). */
#define OFFCPU_WANT_BLOCKED 1u
#define OFFCPU_WANT_RUNQUEUE 2u

/* A thread that left the CPU, in the "starts" map under its tid; ts is 0 once it runs again
 * (the entry stays, for its next interval, until the thread exits).
 * Stack ids index the "stacks" map, or from OFFCPU_STACK_SLOTS on the "ustacks" table; a
 * negative id is an error (the stack is missing: for the map usually -EEXIST, a different
 * stack holds the slot; for the table, other stacks hold all the slots it may take). */
struct offcpu_start {
	__u64 ts;                 /* CLOCK_MONOTONIC ns of the switch-out */
	__s32 kstack, ustack;
	__u32 pid, cpu, phase;
	__u32 deep;               /* 1: the "deep" map holds a stack copy under the thread id */
	__u64 top[OFFCPU_TOP_WORDS];
};

/* One finished interval, sent through the "events" ring buffer at the switch-in; a
 * struct offcpu_deep follows it when the switch-out copied the stack (the record's length
 * says). */
struct offcpu_event {
	__u64 start, end;
	__u32 pid, tid, cpu, phase;
	__s32 kstack, ustack;
	__u64 top[OFFCPU_TOP_WORDS];
};
struct offcpu_deep_event {
	struct offcpu_event e;
	struct offcpu_deep d;
};

/* Per-CPU counters ("counters" map); user space sums the CPUs. */
enum offcpu_counter {
	OFFCPU_C_RING_DROPS = 0,  /* ring buffer full: the interval is lost */
	OFFCPU_C_STARTS_FULL,     /* too many target threads: the interval is not seen */
	OFFCPU_C_KSTACK_ERR,      /* kernel stack could not be stored */
	OFFCPU_C_USTACK_ERR,      /* user stack could not be stored */
	OFFCPU_C_FILTERED,        /* shorter than --offcpu-min-duration-us */
	OFFCPU_C_UNSAMPLED,       /* a switch-out left out by --offcpu-probability */
	OFFCPU_C_DEEP_FULL,       /* a stack copy that did not fit: the user stack stays short */
	/* a thread asleep at the start with no slot left in the iterator's snapshot: if it still
	 * sleeps at the attach, its interval opens there */
	OFFCPU_C_ASLEEP_FULL,
	OFFCPU_C_MAX,
};

#endif
