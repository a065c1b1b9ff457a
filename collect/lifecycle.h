/*
 * The lifecycle program (bpf/lifecycle.bpf.c): exec, fork and exit of the target's
 * processes as they happen.  An exec of the target makes the loop compare the executable's
 * identity at once instead of at the next one-second check, so an exec whose COMM record was
 * lost is still handled without delay.  Where the program cannot run (Linux before 5.8, no
 * BTF, a failed attach) the one-second /proc reconciliation alone remains, and the first
 * window's diagnostics say so in a warning.
 */
#ifndef COLLECT_LIFECYCLE_H
#define COLLECT_LIFECYCLE_H

#include <stdint.h>

struct collect;

/* Loads and attaches the program; on failure remembers why (never fatal). */
void lifecycle_start(struct collect *c);
/* After the first FR_TARGET: the warning of the fallback, if there is one. */
void lifecycle_announce(struct collect *c);
/* An fd that becomes readable when events wait (epoll), or -1 without the program. */
int lifecycle_fd(const struct collect *c);
/* Reads the events: an exec of the target brings the identity check forward. */
void lifecycle_drain(struct collect *c);
void lifecycle_end(struct collect *c);

#endif
