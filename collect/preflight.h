/*
 * Checks made before anything is opened.  record and launch stop at the first failure with
 * one fatal line naming the check (preflight_run); check (check/) runs the same checks one
 * by one and reports every result.
 */
#ifndef COLLECT_PREFLIGHT_H
#define COLLECT_PREFLIGHT_H

#include <stddef.h>
#include <sys/types.h>
#include <sys/utsname.h>

#include "opts.h"

/* Targets with more threads are refused, whatever --max-threads says. */
#define PREFLIGHT_MAX_THREADS 1024

struct preflight {
	char release[sizeof(((struct utsname *)0)->release)];
	int major, minor;       /* of the release */
	int e_machine;          /* the target's, equal to ours */
	int nthreads;
};

/* Each check: 0, or -1 with a one-line reason ("preflight NAME: ...") in why. */
int preflight_root(char *why, size_t whylen);
int preflight_kernel(struct preflight *pf, char *why, size_t whylen);
int preflight_target(pid_t pid, struct preflight *pf, char *why, size_t whylen);
int preflight_threads(pid_t pid, struct preflight *pf, char *why, size_t whylen);
int preflight_perf(pid_t pid, char *why, size_t whylen);
/* 1 when the kernel of pf is major.minor or newer. */
int preflight_kernel_at_least(const struct preflight *pf, int major, int minor);

/* All of the above in order; the first failure exits 1 with its reason. */
void preflight_run(const struct collect_opts *o, struct preflight *pf);

#endif
