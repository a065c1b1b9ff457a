// SPDX-License-Identifier: GPL-2.0
/*
 * Off-CPU intervals of the target's threads, from the sched_switch tracepoint.
 *
 * At a switch-out of a target thread (its tgid is in "targets") the time, the phase and
 * the kernel and user stack ids are kept in "starts" under the thread id; at the switch-in
 * of a thread found there, one offcpu_event goes to the "events" ring buffer.  Everything
 * that is lost is counted in "counters", never silently dropped.  Ring-buffer wakeups are
 * rare on purpose: collect drains on its own clock, and is woken only when the buffer is
 * filling (wakeup_bytes), which keeps the cost per context switch low.
 *
 * CO-RE: built against the build machine's vmlinux.h; field offsets are relocated at load
 * time from the running kernel's BTF (/sys/kernel/btf/vmlinux).
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "offcpu_shared.h"

#define TASK_DEAD_STATE 0x80    /* TASK_DEAD: the last switch of an exiting thread */
#define TASK_HELD_STATES 0x0c   /* __TASK_STOPPED, __TASK_TRACED: held by a signal or tracer */
#define PF_KTHREAD_FLAG 0x00200000
/* One load or store, in program order with the others around it (barrier()). */
#define READ_ONCE(x) (*(volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))

const volatile __u64 min_ns = 0;            /* --offcpu-min-duration-us */
const volatile __u32 phases = OFFCPU_WANT_BLOCKED;
const volatile __u64 wakeup_bytes = 1 << 20; /* wake collect when this much is pending */
/* --offcpu-probability: a switch-out is recorded when a random u32 is below this; 0 records
 * every one.  Left out, it costs a random number instead of two stack walks. */
const volatile __u32 keep_below = 0;
/* With one target process its tgid is compared directly: a map lookup on every context
 * switch of the machine costs more than the comparison.  0: the "targets" map decides. */
const volatile __u32 target_tgid = 0;
/* launch's cgroup scope: the threads of every process of this cgroup v2 (its id), the
 * command's descendants included.  0: by process. */
const volatile __u64 target_cgroup = 0;
/* --cpuid: only a switch-out on a CPU whose "cpus" entry is 1 opens an interval; where the
 * thread wakes or runs next does not matter.  cpu_filter 0: every CPU. */
const volatile __u32 cpu_filter = 0;

/* The task iterator's two runs (collect/offcpu_blocked.c), set by collect before each: the
 * snapshot at the recording's start (open_at), before an unwind calibration, and the run
 * that opens intervals once the switch program is attached (at attach_ns). */
__u32 iter_snapshot = 0;
__u64 open_at = 0;
__u64 attach_ns = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, OFFCPU_MAX_TARGETS);
	__type(key, __u32);
	__type(value, __u8);
} targets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, OFFCPU_MAX_CPUS);
	__type(key, __u32);
	__type(value, __u8);
} cpus SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, OFFCPU_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct offcpu_start);
} starts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, OFFCPU_STACK_SLOTS);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, OFFCPU_MAX_DEPTH * sizeof(__u64));
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, OFFCPU_USTACK_SLOTS);
	__type(key, __u32);
	__type(value, struct offcpu_ustack);
} ustacks SEC(".maps");

/* A user stack is walked here: it is larger than the program's stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct offcpu_ustack);
} ustack_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, OFFCPU_MAX_DEEP);
	__type(key, __u32);
	__type(value, struct offcpu_deep);
} deep SEC(".maps");

/* A stack copy is built here: it is larger than the program's stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct offcpu_deep);
} deep_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22); /* collect sets --offcpu-ring-buffer before loading */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, OFFCPU_C_MAX);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/* The iterator's scratch: it may sleep (reading another task's memory faults pages in), and
 * a switch program running meanwhile on its CPU must not share its per-CPU scratch. */
struct iter_scratch {
	struct offcpu_ustack u;
	struct offcpu_deep d;
};
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct iter_scratch);
} iter_scratch SEC(".maps");

/* The iterator's snapshot: the target threads asleep at the recording's start, by tid, with
 * their context-switch count then. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, OFFCPU_MAX_THREADS);
	__type(key, __u32);
	__type(value, __u64);
} asleep SEC(".maps");

/* Kernels before 5.14 call the field "state". */
struct task_struct___pre514 {
	long state;
} __attribute__((preserve_access_index));

static __always_inline void
count(__u32 which)
{
	__u64 *v = bpf_map_lookup_elem(&counters, &which);
	if (v)
		(*v)++;
}

/* The tracepoint's task pointers are typed (BTF), so their fields are read with plain
 * loads, which the verifier makes fault-safe: a bpf_probe_read_kernel() helper call per
 * field, as BPF_CORE_READ makes, cost more than the rest of a switch that is not recorded.
 * CO-RE still relocates the offsets (vmlinux.h marks the types preserve_access_index). */
static __always_inline long
task_state(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return t->__state;
	return ((struct task_struct___pre514 *)t)->state;
}

static __always_inline int
same_ustack(const struct offcpu_ustack *a, const struct offcpu_ustack *b)
{
	if (a->hash != b->hash || a->nr != b->nr)
		return 0;
	for (__u32 i = 0; i < OFFCPU_MAX_DEPTH && i < b->nr; i++)
		if (a->ips[i] != b->ips[i])
			return 0;
	return 1;
}

/* Reads len bytes of user memory at src: the current task's (task NULL, in the switch
 * program: a constant after inlining, so the other branch is gone), or task's (in the
 * sleepable iterator, whose task is not the current one). */
static __always_inline long
read_user(void *dst, __u32 len, const void *src, struct task_struct *task)
{
	if (task)
		return bpf_copy_from_user_task(dst, len, src, task, 0);
	return bpf_probe_read_user(dst, len, src);
}

/* Stores the stack u (its nr and hash set) in the "ustacks" table: returns its stack id, or
 * -1 when the slots it may take hold other stacks. */
static __always_inline __s32
store_stack(const struct offcpu_ustack *u)
{
	__u64 h = u->hash;
	for (__u32 p = 0; p < OFFCPU_USTACK_PROBES; p++) {
		__u32 slot = (__u32)(h + p) & (OFFCPU_USTACK_SLOTS - 1);
		struct offcpu_ustack *e = bpf_map_lookup_elem(&ustacks, &slot);
		if (!e) {
			if (bpf_map_update_elem(&ustacks, &slot, u, BPF_NOEXIST) == 0)
				return OFFCPU_STACK_SLOTS + slot;
			/* Another CPU took the slot first: its stack may be this one. */
			e = bpf_map_lookup_elem(&ustacks, &slot);
			if (!e)
				continue;
		}
		if (same_ustack(e, u))
			return OFFCPU_STACK_SLOTS + slot;
	}
	return -1;
}

/* The user stack of a thread off the CPU, from its user registers (regs), in u: the
 * frame-pointer chain the kernel's walk for bpf_get_stackid(BPF_F_USER_STACK) reads, its
 * pc then the return address of each frame record ({next frame, return address} at the
 * frame pointer), up to a record that cannot be read or one that does not lead up the
 * stack.  Walked here with one read per record, it costs about a third of the kernel's
 * walk (docs/offcpu.md).  Kept in "ustacks": returns the stack id, or -1.  task: see
 * read_user(). */
static __always_inline __s32
user_stack(struct pt_regs *regs, struct offcpu_ustack *u, struct task_struct *task)
{
	__u64 bp = PT_REGS_FP(regs), pc = PT_REGS_IP(regs), h = 0xcbf29ce484222325ull;
	__u32 n = 1;
	u->ips[0] = pc;
	h = (h ^ pc) * 0x100000001b3ull;
	for (__u32 i = 1; i < OFFCPU_MAX_DEPTH; i++) {
		__u64 rec[2];
		if (read_user(rec, sizeof(rec), (void *)bp, task) != 0)
			break;
		u->ips[i] = rec[1];
		h = (h ^ rec[1]) * 0x100000001b3ull;
		n = i + 1;
		if (rec[0] <= bp || rec[0] & 7)
			break;
		bp = rec[0];
	}
	u->nr = n;
	u->hash = h;
	return store_stack(u);
}

/* The words at the user stack pointer of a thread off the CPU (the one leaving it is still
 * the current task, whose memory bpf_probe_read_user() reads; task: see read_user()), from
 * its user registers (regs), with a copy of the stack in d when its frame pointer is not
 * one; on x86_64 only, elsewhere they stay zero and unwind adds no frame. */
static __always_inline void
read_top(struct pt_regs *regs, __u32 tid, struct offcpu_start *s, struct offcpu_deep *d,
	 struct task_struct *task)
{
#if defined(__TARGET_ARCH_x86)
	__u64 sp = regs->sp, bp = regs->bp;
	if (read_user(s->top, sizeof(s->top), (void *)sp, task) != 0)
		__builtin_memset(s->top, 0, sizeof(s->top));
	/* A frame pointer outside the stack above sp: the frame-pointer walk stopped at the leaf. */
	if (bp >= sp && bp - sp < (1 << 20))
		return;
	d->ts = s->ts;
	d->sp = sp;
	d->bp = bp;
	if (read_user(d->stack, sizeof(d->stack), (void *)sp, task) != 0)
		return;
	if (bpf_map_update_elem(&deep, &tid, d, BPF_ANY) != 0) {
		count(OFFCPU_C_DEEP_FULL);
		return;
	}
	s->deep = 1;
#endif
}

static __always_inline bool
cpu_listed(__u32 cpu)
{
	if (!cpu_filter)
		return true;
	__u8 *on = bpf_map_lookup_elem(&cpus, &cpu);
	return on && *on;
}

/* The time of this switch, read once and only when a target thread is involved. */
static __always_inline __u64
switch_time(__u64 *now)
{
	if (!*now)
		*now = bpf_ktime_get_ns();
	return *now;
}

/* A runnable thread that left the CPU without the preempt flag either asked to
 * (sched_yield) or was replaced on its way back to user space (the tick or a wake-up set
 * need-resched; kernels without full preemption replace busy threads this way).  Only the
 * first is a yield: the thread is then inside the sched_yield system call, which its saved
 * user registers say.  Before bpf_task_pt_regs() (Linux 5.15) nothing tells the two apart
 * cheaply, and such a switch counts as preempted: far more common for a busy thread. */
static __always_inline __u32
runnable_phase(struct task_struct *prev)
{
	if (!bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_task_pt_regs))
		return OFFCPU_PREEMPTED;
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(prev);
#if defined(__TARGET_ARCH_x86)
	long nr = regs->orig_ax;
	const long yield_nr = 24; /* __NR_sched_yield, x86_64 */
#elif defined(__TARGET_ARCH_arm64)
	long nr = regs->syscallno;
	const long yield_nr = 124; /* __NR_sched_yield, arm64 */
#else
#error "runnable_phase: no system call register for this architecture"
#endif
	return nr == yield_nr ? OFFCPU_YIELDED : OFFCPU_PREEMPTED;
}

static __always_inline void
switch_out(void *ctx, bool preempt, struct task_struct *prev, __u64 *now)
{
	__u32 tgid = prev->tgid;
	/* prev is still the current task: its cgroup is the current one. */
	if (target_cgroup) {
		if (bpf_get_current_cgroup_id() != target_cgroup)
			return;
	} else if (target_tgid ? tgid != target_tgid : !bpf_map_lookup_elem(&targets, &tgid)) {
		return;
	}
	if (!cpu_listed(bpf_get_smp_processor_id()))
		return;
	__u32 tid = prev->pid;
	long state = task_state(prev);
	/* The thread's entry (below) goes with the thread. */
	if (state & TASK_DEAD_STATE) {
		bpf_map_delete_elem(&starts, &tid);
		return;
	}
	/* The scheduler keeps a preempted task runnable whatever its state says. */
	__u32 phase = preempt ? OFFCPU_PREEMPTED : state == 0 ? runnable_phase(prev) : OFFCPU_BLOCKED;
	__u32 want = phase == OFFCPU_BLOCKED ? OFFCPU_WANT_BLOCKED : OFFCPU_WANT_RUNQUEUE;
	if (!(phases & want))
		return;
	if (keep_below && bpf_get_prandom_u32() >= keep_below) {
		count(OFFCPU_C_UNSAMPLED);
		return;
	}
	struct offcpu_start s = {
		.ts = switch_time(now), .pid = tgid, .cpu = bpf_get_smp_processor_id(), .phase = phase,
	};
	s.kstack = bpf_get_stackid(ctx, &stacks, 0);
	/* The thread's user registers are at the top of its kernel stack, found with
	 * bpf_task_pt_regs() (Linux 5.15); an older kernel walks the user stack with
	 * bpf_get_stackid(), and has no stack-top words. */
	if (bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_task_pt_regs)) {
		struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(prev);
		__u32 zero = 0;
		struct offcpu_ustack *u = bpf_map_lookup_elem(&ustack_scratch, &zero);
		struct offcpu_deep *d = bpf_map_lookup_elem(&deep_scratch, &zero);
		s.ustack = u ? user_stack(regs, u, NULL) : -1;
		if (s.ustack >= 0 && d)
			read_top(regs, tid, &s, d, NULL);
	} else {
		s.ustack = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
	}
	if (s.kstack < 0)
		count(OFFCPU_C_KSTACK_ERR);
	if (s.ustack < 0)
		count(OFFCPU_C_USTACK_ERR);
	/* A thread keeps its entry from one interval to the next (its ts is 0 while it runs),
	 * written in place: an update and a delete of a hash map entry per interval cost about
	 * a tenth of a recorded switch.  collect reads entries while they change, so ts goes
	 * to 0 before the rest is written and takes its value last, and collect keeps only a
	 * read that a second read gives again (collect/offcpu_drain.c). */
	struct offcpu_start *e = bpf_map_lookup_elem(&starts, &tid);
	if (e) {
		WRITE_ONCE(e->ts, 0);
		barrier();
		__u64 ts = s.ts;
		s.ts = 0;
		__builtin_memcpy(e, &s, sizeof(s));
		barrier();
		WRITE_ONCE(e->ts, ts);
	} else if (bpf_map_update_elem(&starts, &tid, &s, BPF_NOEXIST) != 0) {
		count(OFFCPU_C_STARTS_FULL);
	}
}

/* The thread's interval (s, its entry) is told or dropped: it is marked ended, and its
 * stack copy goes. */
static __always_inline void
forget(struct offcpu_start *s, __u32 tid, struct offcpu_deep *d)
{
	WRITE_ONCE(s->ts, 0);
	if (d)
		bpf_map_delete_elem(&deep, &tid);
}

static __always_inline void
switch_in(struct task_struct *next, __u64 *now)
{
	if (!target_cgroup && target_tgid && next->tgid != target_tgid)
		return;
	__u32 tid = next->pid;
	struct offcpu_start *s = bpf_map_lookup_elem(&starts, &tid);
	if (!s || !READ_ONCE(s->ts))
		return;
	__u64 end = switch_time(now);
	struct offcpu_deep *d = s->deep ? bpf_map_lookup_elem(&deep, &tid) : NULL;
	if (end - s->ts < min_ns) {
		count(OFFCPU_C_FILTERED);
		forget(s, tid, d);
		return;
	}
	struct offcpu_event *e;
	if (d) {
		struct offcpu_deep_event *de = bpf_ringbuf_reserve(&events, sizeof(*de), 0);
		if (de)
			__builtin_memcpy(&de->d, d, sizeof(*d));
		e = de ? &de->e : NULL;
	} else {
		e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	}
	if (!e) {
		count(OFFCPU_C_RING_DROPS);
		forget(s, tid, d);
		return;
	}
	e->start = s->ts;
	e->end = end;
	e->pid = s->pid;
	e->tid = tid;
	e->cpu = s->cpu;
	e->phase = s->phase;
	e->kstack = s->kstack;
	e->ustack = s->ustack;
	__builtin_memcpy(e->top, s->top, sizeof(e->top));
	forget(s, tid, d);
	__u64 flags = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes ?
			      BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
	bpf_ringbuf_submit(e, flags);
}

/* The kernel stack of task, off the CPU, in u, kept in "ustacks" like a user stack: its
 * stack id, or -1. */
static __always_inline __s32
task_kstack(struct task_struct *task, struct offcpu_ustack *u)
{
	long got = bpf_get_task_stack(task, u->ips, sizeof(u->ips), 0);
	if (got <= 0)
		return -1;
	__u64 h = 0xcbf29ce484222325ull;
	__u32 n = (__u32)got / 8;
	for (__u32 i = 0; i < OFFCPU_MAX_DEPTH && i < n; i++)
		h = (h ^ u->ips[i]) * 0x100000001b3ull;
	u->nr = n;
	u->hash = h;
	return store_stack(u);
}

/* A target thread of the iterator's task that sleeps: not running, not on a CPU, not
 * stopped or traced, not exiting; 0 for any other task. */
static __always_inline int
sleeping_target(struct task_struct *task)
{
	if (!task || (task->flags & PF_KTHREAD_FLAG) || !(phases & OFFCPU_WANT_BLOCKED))
		return 0;
	if (target_cgroup ? BPF_CORE_READ(task, cgroups, dfl_cgrp, kn, id) != target_cgroup :
			    (__u32)task->tgid != target_tgid)
		return 0;
	/* Asleep since its last switch-out, on the CPU it last ran on. */
	if (!cpu_listed(task->thread_info.cpu))
		return 0;
	long state = task_state(task);
	return state != 0 && !(state & (TASK_DEAD_STATE | TASK_HELD_STATES)) && !task->on_cpu;
}

/* Every switch-out adds one: unchanged, the thread has not run in between. */
static __always_inline __u64
switches(struct task_struct *task)
{
	return task->nvcsw + task->nivcsw;
}

/* Where the interval of a thread found sleeping at the attach opens: at the recording's
 * start if it slept then already and has not run since (blocked since before the start),
 * else at the attach, which leaves out at most the time between the two (an unwind
 * calibration) rather than count a thread that ran then as blocked. */
static __always_inline __u64
opened_at(struct task_struct *task, __u32 tid)
{
	__u64 *then = bpf_map_lookup_elem(&asleep, &tid);
	return then && *then == switches(task) ? open_at : attach_ns;
}

/* A target thread that sleeps when the recording starts never switches out while it is
 * watched: run once at the start (snapshot), this notes each one (task); run once more
 * when the switch program is attached, it opens the interval of each one still asleep
 * (opened_at()), with the stacks a switch-out would have taken, unless the switch program
 * has an entry for the thread already.  A thread woken meanwhile may have switched in
 * before its entry was there: its interval is then closed at once (ts 0), as if it were
 * running. */
SEC("iter.s/task")
int offcpu_blocked(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	__u32 zero = 0;
	if (!sleeping_target(task))
		return 0;
	__u32 tid = task->pid;
	if (iter_snapshot) {
		__u64 n = switches(task);
		if (bpf_map_update_elem(&asleep, &tid, &n, BPF_ANY) != 0)
			count(OFFCPU_C_ASLEEP_FULL);
		return 0;
	}
	struct iter_scratch *x = bpf_map_lookup_elem(&iter_scratch, &zero);
	if (!x || bpf_map_lookup_elem(&starts, &tid))
		return 0;
	struct offcpu_start s = {
		.ts = opened_at(task, tid), .pid = task->tgid, .cpu = task->thread_info.cpu,
		.phase = OFFCPU_BLOCKED,
	};
	s.kstack = task_kstack(task, &x->u);
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	s.ustack = user_stack(regs, &x->u, task);
	if (s.ustack >= 0)
		read_top(regs, tid, &s, &x->d, task);
	if (s.kstack < 0)
		count(OFFCPU_C_KSTACK_ERR);
	if (s.ustack < 0)
		count(OFFCPU_C_USTACK_ERR);
	if (bpf_map_update_elem(&starts, &tid, &s, BPF_NOEXIST) != 0)
		return 0;
	struct offcpu_start *e = bpf_map_lookup_elem(&starts, &tid);
	if (e && task_state(task) == 0)
		__sync_val_compare_and_swap(&e->ts, s.ts, 0);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(offcpu_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 now = 0;
	switch_out(ctx, preempt, prev, &now);
	switch_in(next, &now);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
