/*
 * The record shared by bpf/lifecycle.bpf.c and collect/lifecycle.c (the same rules as
 * offcpu_shared.h: __u32-style types, fixed layout).
 */
#ifndef RP_BPF_LIFECYCLE_SHARED_H
#define RP_BPF_LIFECYCLE_SHARED_H

enum lifecycle_kind {
	LIFECYCLE_EXEC = 1,     /* pid executed a new image (tid is the thread that did) */
	LIFECYCLE_FORK = 2,     /* ppid created the new process pid */
	LIFECYCLE_EXIT = 3,     /* the last thread of pid ended */
};

struct lifecycle_event {
	__u64 time;             /* CLOCK_MONOTONIC ns */
	__u32 kind, pid, tid, ppid;
};

#endif
