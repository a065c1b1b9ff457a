/*
 * The short-lived cgroup v2 of launch: created under the cgroup v2 hierarchy (or under
 * $RUSTPROFILE_CGROUP_PARENT), the stopped command moved into it, and removed at the end
 * once every task in it ended.  Tasks forked inside stay inside, so the cgroup holds the
 * command and all its descendants.
 */
#ifndef COLLECT_CGROUP_H
#define COLLECT_CGROUP_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CGROUP_PARENT_ENV "RUSTPROFILE_CGROUP_PARENT"

struct launch_cgroup {
	char path[PATH_MAX];    /* "" when none was created */
	int fd;                 /* the directory, for perf_event_open; -1 when none */
	uint64_t id;            /* the cgroup id (inode of the directory), for BPF filters */
};

/* The parent directory new cgroups go under: $RUSTPROFILE_CGROUP_PARENT, else the mount
 * point of the cgroup v2 hierarchy.  0, or -1 with err when there is no usable one. */
int cgroup_parent(char *buf, size_t len, char *err, size_t errlen);
/* Creates PARENT/rustprofile-SESSION-PID and moves pid into it.  0, or -1 with err (and
 * nothing left behind). */
int cgroup_create(struct launch_cgroup *g, uint64_t session_id, pid_t pid, char *err,
		  size_t errlen);
/* The processes in the cgroup now; -1 with errno when cgroup.procs cannot be read. */
int cgroup_procs(const struct launch_cgroup *g, pid_t **out, size_t *n);
/* Removes the cgroup once empty (tasks that just exited may take a moment to leave).
 * 0 when removed, the number of processes still inside, or -1 with err. */
int cgroup_remove(struct launch_cgroup *g, char *err, size_t errlen);

#endif
