/*
 * What collect reads about the target from /proc: threads, names, the executable and its
 * mappings, and a way to open a mapped file even when its path is not visible to us.
 */
#ifndef COLLECT_PROCFS_H
#define COLLECT_PROCFS_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct tidlist {
	pid_t *v;
	size_t n, cap;
};

/* Fills out (emptied first) with the tids in /proc/PID/task; -1 with errno set. */
int procfs_tasks(pid_t pid, struct tidlist *out);
int tidlist_has(const struct tidlist *l, pid_t tid);
/* Appends tid; -1 when out of memory. */
int tidlist_add(struct tidlist *l, pid_t tid);
void tidlist_free(struct tidlist *l);

/* The thread's name without the newline; -1 when the thread is gone. */
int procfs_comm(pid_t pid, pid_t tid, char *buf, size_t len);
/* The pid of the process inside its own pid namespace (the last NSpid), which names its
 * /tmp/perf-PID.map; pid itself when the kernel does not say. */
pid_t procfs_ns_pid(pid_t pid);
/* The process's start_stack (the 28th field of /proc/PID/stat: its first thread's initial
 * sp, where argc lies); -1 when the process is gone or the field is 0 (hidden). */
int procfs_start_stack(pid_t pid, uint64_t *top);
/* readlink of /proc/PID/exe; -1 with errno set. */
int procfs_exe(pid_t pid, char *buf, size_t len);

struct procmap {
	uint64_t start, end, pgoff;
	uint32_t prot, flags;   /* PROT_*, MAP_PRIVATE or MAP_SHARED */
	char path[PATH_MAX];    /* "" for anonymous mappings */
};
/* Calls fn for each line of /proc/PID/maps; stops when fn returns non-zero.  -1 with errno
 * set when maps cannot be read. */
int procfs_maps(pid_t pid, int (*fn)(const struct procmap *m, void *arg), void *arg);
/* The same for the lines of an open maps file (f stays open); -1 when out of memory. */
int procfs_maps_file(FILE *f, int (*fn)(const struct procmap *m, void *arg), void *arg);

/* Opens the file behind a mapping: /proc/PID/map_files/START-END, else /proc/PID/root/PATH
 * (the target's mount namespace).  An fd or -1. */
int procfs_open_mapping(pid_t pid, uint64_t start, uint64_t end, const char *path);

#endif
