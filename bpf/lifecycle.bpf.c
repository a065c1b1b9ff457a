// SPDX-License-Identifier: GPL-2.0
/*
 * Exec, fork and exit of the target's processes, from the sched_process_* BTF tracepoints,
 * one lifecycle_event each through a small ring buffer that wakes collect at once (these
 * are rare).  The target is one process (target_tgid) or, for launch's cgroup scope, every
 * process of one cgroup v2 (target_cgroup).  In all three tracepoints the current task is
 * the one concerned (the parent, for a fork), so its cgroup is the current one.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "lifecycle_shared.h"

const volatile __u32 target_tgid = 0;
const volatile __u64 target_cgroup = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 16);
} events SEC(".maps");

/* Events the full ring buffer refused; collect reconciles from /proc then. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} drops SEC(".maps");

static __always_inline int
is_target(__u32 tgid)
{
	if (target_cgroup)
		return bpf_get_current_cgroup_id() == target_cgroup;
	return tgid == target_tgid;
}

static __always_inline void
report(__u32 kind, __u32 pid, __u32 tid, __u32 ppid)
{
	struct lifecycle_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		__u32 zero = 0;
		__u64 *n = bpf_map_lookup_elem(&drops, &zero);
		if (n)
			(*n)++;
		return;
	}
	e->time = bpf_ktime_get_ns();
	e->kind = kind;
	e->pid = pid;
	e->tid = tid;
	e->ppid = ppid;
	bpf_ringbuf_submit(e, 0);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(lifecycle_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	if (is_target(tgid))
		report(LIFECYCLE_EXEC, tgid, BPF_CORE_READ(p, pid), 0);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(lifecycle_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid), ctgid = BPF_CORE_READ(child, tgid);
	/* A new thread of the same process is not a new process. */
	if (ctgid != ptgid && is_target(ptgid))
		report(LIFECYCLE_FORK, ctgid, BPF_CORE_READ(child, pid), ptgid);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(lifecycle_exit, struct task_struct *p)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	/* Every thread passes here; the process ends with the last one. */
	if (is_target(tgid) && BPF_CORE_READ(p, signal, live.counter) == 0)
		report(LIFECYCLE_EXIT, tgid, BPF_CORE_READ(p, pid), 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
