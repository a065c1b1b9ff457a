/*
 * Which processes a recording covers (manual: "launch, import, and serve" and "Target
 * lifecycle, signals, and partial mode").  record --pid covers one process.  launch asks
 * for the cgroup scope: the command and every descendant, through a short-lived cgroup v2
 * sampled per CPU; when that cgroup cannot be made, --allow-partial falls back to the
 * command's own pid and anything else is fatal.  record --host covers every process of the
 * machine, sampled by CPU (host.c).
 */
#ifndef COLLECT_SCOPE_H
#define COLLECT_SCOPE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup.h"
#include "emit.h"
#include "u32set.h"

struct scope {
	pid_t target;           /* the target (launch: the command) */
	const char *requested;  /* "process" or "cgroup" */
	const char *effective;
	char reason[PATH_MAX + 400]; /* why effective is not requested, or "" */
	int cgroup;             /* 1: the events sample the cgroup cg */
	struct launch_cgroup cg;
	int adopted;            /* cg is a container's, made and removed by its runtime */
	struct u32set known;    /* cgroup scope: processes whose mappings the stream holds */
	/* The events see every task of the machine (off-CPU alone watches the CPUs, not the
	 * cgroup): a process not known is looked up in the cgroup once, and remembered as
	 * inside or outside until it exits. */
	int unfiltered;
	struct u32set inside, outside;
	int host;               /* --host: every process of the machine, target 0 */
};

struct collect_opts;

/* The scope of record --pid: the process target. */
void scope_init(struct scope *s, pid_t target);
/* --host: every process of the machine is covered; there is no target. */
void scope_host(struct scope *s);
/* launch, the command (the target) stopped after its exec: creates the cgroup and moves
 * the command into it; without one, falls back with --allow-partial or kills the command
 * and exits. */
void scope_launch(struct scope *s, uint64_t session_id, int allow_partial, int verbose);
/* A container target: its init process and the cgroup of all its processes (ctarget.h),
 * again after a restart; exits on a cgroup that cannot be opened. */
void scope_container(struct scope *s, pid_t init, const char *cgroup);
/* collect --check --launch: whether a cgroup v2 parent exists (fatal without one unless
 * --allow-partial). */
void scope_check(int allow_partial);
/* Once the stream started: the warning of a fallback, inside the first window. */
void scope_announce(const struct scope *s, struct emit *out, uint64_t time);

/* The id of launch's cgroup in the cgroup scope, for the eBPF programs; else 0. */
uint64_t scope_cgroup_id(const struct scope *s);
/* The events open from now on see every task, not only the cgroup's. */
void scope_unfiltered(struct scope *s, int unfiltered);
/* 1 when records of pid belong to the recording: the target's, and in the cgroup scope
 * every process's of the cgroup (the calibration judges them all, as the recording will
 * cover them). */
int scope_covers(struct scope *s, uint32_t pid);
/* Before a sample of pid: 1 for a process of the cgroup the stream knows nothing about (it
 * appeared while nothing was written), whose mappings and names the caller writes from /proc
 * first; it is known from then on, even if /proc no longer has it. */
int scope_first_sample(struct scope *s, uint32_t pid);
/* pid's mappings are in the stream: a fork of a known process, or a new image. */
void scope_known(struct scope *s, uint32_t pid);
/* A FORK record of a new process, before scope_covers() is asked about it (the child is
 * born in its parent's cgroup, and may be gone before its records are read): unwind gives
 * it the parent's mappings, which the stream holds when the parent is known. */
void scope_forked(struct scope *s, uint32_t pid, uint32_t ppid);
/* A process ended (inside the scope or not): a later process with its pid is a new one. */
void scope_gone(struct scope *s, uint32_t pid);
/* fn(arg, pid) for every process in the cgroup other than the target, each known from
 * then on. */
void scope_each_process(struct scope *s, void (*fn)(void *arg, pid_t pid), void *arg);

/* At the end, before the END frame: removes the cgroup, or warns that tasks remain. */
void scope_finish(struct scope *s, struct emit *out, uint64_t time, int verbose);

#endif
