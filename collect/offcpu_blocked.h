/*
 * The threads already off the CPU at the start of an off-CPU recording
 * (collect/offcpu_blocked.c): their intervals open at the recording's start.
 */
#ifndef COLLECT_OFFCPU_BLOCKED_H
#define COLLECT_OFFCPU_BLOCKED_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct offcpu_bpf;

/* 1 when the kernel runs the iterator and a recording starts at open_at (0: the --check
 * probe, which records nothing); else its program is not loaded. */
int offcpu_blocked_wanted(uint64_t open_at);
/* Runs the iterator once over the threads of pid (cgroup: over every task, the program
 * keeping the cgroup's).  0, or -1 with a one-line reason in why. */
int offcpu_blocked_run(struct offcpu_bpf *skel, pid_t pid, int cgroup, char *why,
		       size_t whylen);

#endif
