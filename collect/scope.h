/*
 * Which processes a recording covers (manual: "launch, import, and serve" and "Target
 * lifecycle, signals, and partial mode").  record --pid covers one process.  launch asks
 * for the cgroup scope: the command and every descendant, through a short-lived cgroup v2
 * sampled per CPU; when that cgroup cannot be made, --allow-partial falls back to the
 * command's own pid and anything else is fatal.
 */
#ifndef COLLECT_SCOPE_H
#define COLLECT_SCOPE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup.h"
#include "u32set.h"

struct scope {
	const char *requested;  /* "process" or "cgroup"; NULL until scope_init */
	const char *effective;
	char reason[PATH_MAX + 400]; /* why effective is not requested, or "" */
	int cgroup;             /* 1: the events sample the cgroup cg */
	struct launch_cgroup cg;
	/* cgroup scope: processes whose mappings the stream holds (sorted) */
	struct u32set known;
};

struct collect;
struct collect_opts;

/* The scope of record --pid: the process. */
void scope_init(struct collect *c);
/* launch, the command stopped after its exec: creates the cgroup and moves the command
 * into it; without one, falls back with --allow-partial or kills the command and exits. */
void scope_launch(struct collect *c);
/* collect --check --launch: whether a cgroup v2 parent exists (fatal without one unless
 * --allow-partial). */
void scope_check(const struct collect_opts *o);
/* Once the stream started: the warning of a fallback, inside the first window. */
void scope_announce(struct collect *c);

/* 1 when records of pid belong to the recording: the target's, and in the cgroup scope
 * every process's (the calibration judges them all, as the recording will cover them). */
int scope_covers(const struct collect *c, uint32_t pid);
/* Before a sample of pid: a process of the cgroup the stream knows nothing about (it
 * appeared while nothing was written) gets its mappings and names from /proc first. */
void scope_sample(struct collect *c, uint32_t pid);
/* pid's mappings are in the stream: a fork of a known process, or a new image. */
void scope_known(struct collect *c, uint32_t pid);
/* A FORK record of a new process: unwind gives it the parent's mappings, which the stream
 * holds when the parent is known. */
void scope_forked(struct collect *c, uint32_t pid, uint32_t ppid);
/* A process ended: a later process with its pid is a new one. */
void scope_gone(struct collect *c, uint32_t pid);
/* Called by synth_existing: every process in the cgroup other than the target. */
void scope_each_process(struct collect *c, void (*fn)(struct collect *c, pid_t pid));

/* At the end, before the END frame: removes the cgroup, or warns that tasks remain. */
void scope_finish(struct collect *c, uint64_t time);

#endif
