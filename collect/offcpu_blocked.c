/*
 * The threads already off the CPU when the recording starts: the sched_switch program sees a
 * thread only when it leaves the CPU, so one that sleeps through the recording (a sleep
 * under record --pid, a main thread in pthread_join) would have no interval at all.  The
 * task iterator of bpf/offcpu.bpf.c (offcpu_blocked) runs over the target's threads (the
 * target's only, or every task when the scope is a cgroup, filtered by the program) twice:
 * at the recording's start it notes the sleeping ones with their context-switch counts;
 * once the switch program is attached (after an unwind calibration, seconds later) it opens
 * the interval of each sleeping one, with the stacks a switch-out takes, at the start if it
 * has not run since, else at the attach.  From then on the drain treats it as any other
 * (docs/offcpu.md).
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "offcpu_blocked.h"
#include "offcpu.skel.h"

/* The sleepable task iterator reads other tasks' user memory (bpf_copy_from_user_task) from
 * Linux 5.18, and visits one process's threads only from 6.1. */
int
offcpu_blocked_wanted(int recording)
{
	struct utsname u;
	unsigned major = 0, minor = 0;
	if (!recording || uname(&u) < 0 || sscanf(u.release, "%u.%u", &major, &minor) != 2)
		return 0;
	return major > 6 || (major == 6 && minor >= 1);
}

static int
run(struct offcpu_bpf *skel, pid_t pid, int cgroup, char *why, size_t whylen)
{
	union bpf_iter_link_info info;
	memset(&info, 0, sizeof(info));
	info.task.pid = cgroup ? 0 : (__u32)pid;
	LIBBPF_OPTS(bpf_iter_attach_opts, opts, .link_info = &info,
		    .link_info_len = sizeof(info));
	struct bpf_link *link = bpf_program__attach_iter(skel->progs.offcpu_blocked, &opts);
	if (!link) {
		snprintf(why, whylen, "cannot attach the task iterator: %s", strerror(errno));
		return -1;
	}
	int fd = bpf_iter_create(bpf_link__fd(link)), rc = 0;
	if (fd < 0) {
		snprintf(why, whylen, "cannot create the task iterator: %s", strerror(errno));
		rc = -1;
	} else {
		/* The program writes nothing: one read runs it over every task. */
		char buf[64];
		ssize_t n;
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			;
		if (n < 0) {
			snprintf(why, whylen, "the task iterator failed: %s", strerror(errno));
			rc = -1;
		}
		close(fd);
	}
	bpf_link__destroy(link);
	return rc;
}

int
offcpu_blocked_snapshot(struct offcpu_bpf *skel, pid_t pid, int cgroup, uint64_t start_ns,
			char *why, size_t whylen)
{
	skel->bss->open_at = start_ns;
	skel->bss->iter_snapshot = 1;
	return run(skel, pid, cgroup, why, whylen);
}

int
offcpu_blocked_open(struct offcpu_bpf *skel, pid_t pid, int cgroup, uint64_t attach_ns,
		    char *why, size_t whylen)
{
	skel->bss->attach_ns = attach_ns;
	skel->bss->iter_snapshot = 0;
	return run(skel, pid, cgroup, why, whylen);
}
