// SPDX-License-Identifier: GPL-2.0
/*
 * Exec, fork and exit of the target's processes, one lifecycle_event each through a small
 * ring buffer that wakes collect at once (these are rare).  The target is one process
 * (target_tgid) or, for launch's cgroup scope, every process of one cgroup v2
 * (target_cgroup).  In all three tracepoints the current task is the one concerned (the
 * parent, for a new task), so its ids and cgroup come from helpers.
 *
 * Classic tracepoints and no CO-RE read: loading needs no kernel BTF, so libbpf does not
 * parse /sys/kernel/btf/vmlinux (about 10 ms of CPU at every start, docs/lifecycle.md).
 * The few record fields read are in tracefs's events/.../format; their offsets have not
 * moved since the tracepoints were added, and the one that is recent (group_dead) is
 * located by collect in the format file and read only where it exists.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "lifecycle_shared.h"

#define RP_CLONE_THREAD 0x00010000

const volatile __u32 target_tgid = 0;
const volatile __u64 target_cgroup = 0;
/* sched_process_exit's group_dead field where the kernel has it, else 0. */
const volatile __u32 group_dead_offset = 0;

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

/* task/task_newtask's record: the new task, and how it was cloned.  (Declared here, not
 * taken from vmlinux.h, whose types carry CO-RE relocations.) */
struct rp_newtask {
	__u64 common;
	__s32 pid;
	char comm[16];
	__u64 clone_flags;
};

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

/* After the exec the thread that made it leads the process: its id is the process's. */
SEC("tracepoint/sched/sched_process_exec")
int
lifecycle_exec(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = (__u32)(id >> 32);
	if (is_target(tgid))
		report(LIFECYCLE_EXEC, tgid, (__u32)id, 0);
	return 0;
}

/* A new task: a new process unless it shares the parent's thread group. */
SEC("tracepoint/task/task_newtask")
int
lifecycle_fork(struct rp_newtask *ctx)
{
	if (ctx->clone_flags & RP_CLONE_THREAD)
		return 0;
	__u32 ptgid = (__u32)(bpf_get_current_pid_tgid() >> 32);
	if (is_target(ptgid))
		report(LIFECYCLE_FORK, (__u32)ctx->pid, (__u32)ctx->pid, ptgid);
	return 0;
}

/* Every thread passes here; the process ends with the last one (group_dead).  Without that
 * field, the end of the thread group's leader stands for the process's. */
SEC("tracepoint/sched/sched_process_exit")
int
lifecycle_exit(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = (__u32)(id >> 32);
	if (!is_target(tgid))
		return 0;
	int last = (__u32)id == tgid;
	if (group_dead_offset) {
		/* Read, not dereferenced: a record offset beyond an older kernel's record would
		 * make the attach fail, and this one is used only where it exists. */
		__u8 dead = 0;
		bpf_probe_read_kernel(&dead, sizeof(dead), (char *)ctx + group_dead_offset);
		last = dead != 0;
	}
	if (last)
		report(LIFECYCLE_EXIT, tgid, (__u32)id, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
