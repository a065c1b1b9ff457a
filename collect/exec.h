/*
 * An exec of the target after the recording started (manual: "Target lifecycle"): the
 * image the mode was chosen for is gone, so the recording of that image ends with a
 * warning and the loop chooses the mode again for the new image.  Two signals find an exec:
 * the COMM record the kernel flags as an exec (immediate), and a change of the executable's
 * identity, checked about once a second (at once after the lifecycle program saw an exec),
 * which catches an exec whose record was lost.  This file decides when an exec is due; the
 * loop handles it.
 */
#ifndef COLLECT_EXEC_H
#define COLLECT_EXEC_H

#include <stdint.h>
#include <sys/types.h>

#include "emit.h"

struct exec_watch {
	uint64_t dev, ino;      /* identity of the target's executable */
	uint64_t next_check;    /* when to compare that identity again */
	uint64_t pending;       /* a COMM exec of the target not yet handled, or 0 */
};

/* Remembers the identity of the image pid runs now; an exec seen before is handled. */
void exec_identity(struct exec_watch *x, pid_t pid);
/* A COMM record of the target flagged as an exec, at time: 1 when it is the first one not
 * handled yet, and its warning is written (before the round that lets its window close). */
int exec_seen(struct exec_watch *x, struct emit *out, pid_t pid, uint64_t time);
/* The identity is compared next at now plus a second, or at the next turn of the loop. */
void exec_check_after(struct exec_watch *x, uint64_t now);
void exec_check_soon(struct exec_watch *x);
/* The time of an exec the loop must handle now, or 0: one seen in a record, or a new
 * identity at the check (stamped now, with the warning and the COMM no record gave). */
uint64_t exec_due(struct exec_watch *x, struct emit *out, pid_t pid, uint64_t now);

#endif
