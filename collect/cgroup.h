/*
 * The short-lived cgroup v2 of launch: created under the cgroup v2 hierarchy (or under
 * $RUSTPROFILE_CGROUP_PARENT), the stopped command moved into it, and removed at the end.
 * Tasks forked inside stay inside, so the cgroup holds the command and all its descendants.
 * The processes still inside at the end go back to the cgroup collect was in when it made
 * the launch cgroup (where the command was started from) and keep running.
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
	char origin[PATH_MAX];  /* collect's own cgroup v2 at creation; "" when unknown */
};

/* The parent directory new cgroups go under: $RUSTPROFILE_CGROUP_PARENT, else the mount
 * point of the cgroup v2 hierarchy.  0, or -1 with err when there is no usable one. */
int cgroup_parent(char *buf, size_t len, char *err, size_t errlen);
/* Creates PARENT/rustprofile-SESSION-PID and moves pid into it.  0, or -1 with err (and
 * nothing left behind). */
int cgroup_create(struct launch_cgroup *g, uint64_t session_id, pid_t pid, char *err,
		  size_t errlen);
/* The cgroup v2 mount point and (root not NULL) the cgroup it shows as its root: 1, or 0
 * when none is mounted. */
int cgroup_mount_point(char *buf, size_t len, char *root, size_t rootlen);
/* The cgroup v2 directory of pid (0: collect's own), from /proc/PID/cgroup: 0, or -1. */
int cgroup_of_task(pid_t pid, char *buf, size_t len);
/* A container's cgroup, made and removed by its runtime: g describes the existing
 * directory path (fd and id), which collect never removes.  0, or -1 with err. */
int cgroup_adopt(struct launch_cgroup *g, const char *path, char *err, size_t errlen);
/* Forgets an adopted cgroup (closes its fd). */
void cgroup_release(struct launch_cgroup *g);
/* 1 when pid is in the cgroup or below it now; 0 when it is not, or is gone. */
int cgroup_holds(const struct launch_cgroup *g, pid_t pid);
/* The processes in the cgroup now; -1 with errno when cgroup.procs cannot be read. */
int cgroup_procs(const struct launch_cgroup *g, pid_t **out, size_t *n);
/* Moves every process still in the cgroup back to g->origin, then removes the cgroup,
 * retrying up to tries x 10 ms while it is busy (a task that just ended leaves it late, a
 * process may fork meanwhile).  *moved counts the processes moved.  0 when removed, or -1
 * with err naming the cgroup (it is left in place). */
int cgroup_empty_remove(struct launch_cgroup *g, int tries, size_t *moved, char *err,
			size_t errlen);
/* The same at the end of a recording, for up to 2 s; the cgroup is forgotten either way,
 * so collect's exit does not try again. */
int cgroup_remove(struct launch_cgroup *g, size_t *moved, char *err, size_t errlen);

#endif
