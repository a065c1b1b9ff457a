/*
 * The threads already off the CPU at the start of an off-CPU recording
 * (collect/offcpu_blocked.c): their intervals open at the recording's start, or at the
 * attach of the switch program for those that ran in between.
 */
#ifndef COLLECT_OFFCPU_BLOCKED_H
#define COLLECT_OFFCPU_BLOCKED_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct offcpu_bpf;

/* 1 when the kernel runs the iterator and this is a recording (0: the --check probe, which
 * records nothing); else its program is not loaded. */
int offcpu_blocked_wanted(int recording);
/* The iterator over the threads of pid (cgroup: over every task, the program keeping the
 * cgroup's), run once at the recording's start (start_ns), noting the sleeping threads, and
 * once after the switch program is attached (at attach_ns), opening their intervals.  0,
 * or -1 with a one-line reason in why. */
int offcpu_blocked_snapshot(struct offcpu_bpf *skel, pid_t pid, int cgroup, uint64_t start_ns,
			    char *why, size_t whylen);
int offcpu_blocked_open(struct offcpu_bpf *skel, pid_t pid, int cgroup, uint64_t attach_ns,
			char *why, size_t whylen);

#endif
