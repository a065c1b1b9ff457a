/*
 * The lifecycle program (bpf/lifecycle.bpf.c): exec, fork and exit of the target's
 * processes as they happen.  An exec of the target makes the loop compare the executable's
 * identity at once instead of at the next one-second check, so an exec whose COMM record was
 * lost is still handled without delay.  Where the program cannot run (Linux before 5.8, a
 * failed load or attach) the one-second /proc reconciliation alone remains, and the first
 * window's diagnostics say so in a warning.
 */
#ifndef COLLECT_LIFECYCLE_H
#define COLLECT_LIFECYCLE_H

#include <stdint.h>
#include <sys/types.h>

#include "emit.h"

struct lifecycle;

struct lifecycle_run {
	struct lifecycle *prog;         /* NULL when not running */
	char why[320];                  /* why it is not */
};

/* Loads and attaches the program for pid (and launch's cgroup, when cgroup_id is not 0);
 * on failure remembers why (never fatal). */
void lifecycle_start(struct lifecycle_run *r, pid_t pid, uint64_t cgroup_id, int verbose);
/* After the first FR_TARGET: the warning of the fallback, if there is one. */
void lifecycle_announce(const struct lifecycle_run *r, struct emit *out, uint64_t time);
/* An fd that becomes readable when events wait (epoll), or -1 without the program. */
int lifecycle_fd(const struct lifecycle_run *r);
/* Reads the events: 1 when the target executed (its identity is to be checked at once). */
int lifecycle_drain(struct lifecycle_run *r);
void lifecycle_end(struct lifecycle_run *r);

#endif
