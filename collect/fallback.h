/*
 * The permanent fallback of --unwind auto (manual: "Unwinding and automatic fallback"):
 * after a successful frame-pointer calibration, every sample is judged the way unwind will
 * judge it (empty, cyclic, or with a user address outside the target's executable mappings
 * is unusable), window by window on the later stages' boundaries.  A completed window with
 * fewer usable stacks than the threshold (90%) switches the recording to DWARF for good.
 */
#ifndef COLLECT_FALLBACK_H
#define COLLECT_FALLBACK_H

#include <stddef.h>
#include <stdint.h>

#include "ranges.h"

#define FALLBACK_USABLE_PERMILLE 900 /* the manual's 90% usable stacks */

struct fallback {
	int armed;                /* auto mode, frame pointers in use, no switch yet */
	int pending;              /* a window failed: the loop switches at its next turn */
	uint64_t width;           /* the window length of the later stages */
	uint64_t start, end;      /* the window being judged: [start, end) */
	uint64_t total, usable;   /* its samples */
	uint64_t failed_end;      /* the end of the window that failed */
	char why[200];            /* what that window showed */
	int tables;               /* the target has unwind tables to switch to */
	struct ranges maps;       /* the target's executable mappings, as sent to unwind */
};

struct collect;

/* Starts judging windows of o.window_ns from origin (the start, or an exec) when the mode
 * in effect came from an accepted auto calibration; stops judging otherwise. */
void fallback_arm(struct collect *c, uint64_t origin);
/* An executable mapping of the target; it replaces whatever it overlaps. */
void fallback_map(struct fallback *f, uint64_t start, uint64_t end);
/* The target executed a new image: its mappings are gone and judging stops until the
 * mode for the new image is chosen. */
void fallback_exec(struct fallback *f);
/* One frame-pointer sample of the target (user frames leaf first). */
void fallback_sample(struct collect *c, uint64_t time, unsigned nkernel, const uint64_t *uips,
		     unsigned nuser);
/* Every event at or before time has been read: windows that ended by then are judged. */
void fallback_round(struct collect *c, uint64_t time);
/* After a failed window: a warning, a new FR_TARGET in DWARF mode that applies from the
 * next window, and the events reopened for DWARF.  Without unwind tables frame pointers
 * stay, with a warning.  1 when the events were reopened. */
int fallback_switch(struct collect *c);
void fallback_free(struct fallback *f);

#endif
