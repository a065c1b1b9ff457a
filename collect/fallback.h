/*
 * The permanent fallback of --unwind auto (manual: "Unwinding and automatic fallback"):
 * after a successful frame-pointer calibration, every sample is judged the way unwind will
 * judge it (empty, cyclic, or with a user address outside the target's executable mappings
 * is unusable), window by window on the later stages' boundaries.  A completed window with
 * fewer usable stacks than the threshold (90%) switches the recording to DWARF for good.
 * This file decides; the loop does the switch (mode.h, reopen).
 */
#ifndef COLLECT_FALLBACK_H
#define COLLECT_FALLBACK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "emit.h"
#include "mode.h"
#include "ranges.h"

#define FALLBACK_USABLE_PERMILLE 900 /* the manual's 90% usable stacks */

struct fallback {
	pid_t pid;                /* the target, whose unwind tables the switch needs */
	int verbose;
	uint64_t width;           /* the recording's window length (--window, FR_TARGET) */
	int armed;                /* auto mode, frame pointers in use, no switch yet */
	int pending;              /* a window failed: the loop switches at its next turn */
	uint64_t start, end;      /* the window being judged: [start, end) */
	uint64_t total, usable;   /* its samples */
	uint64_t heap_total, heap_usable; /* its allocation samples */
	uint64_t failed_end;      /* the end of the window that failed */
	char why[200];            /* what that window showed */
	int tables;               /* the target has unwind tables to switch to */
	struct ranges maps;       /* the target's executable mappings, as sent to unwind */
};

void fallback_init(struct fallback *f, pid_t pid, uint64_t width, int verbose);
/* Starts judging windows from origin (the start, or an exec) when the mode in effect came
 * from an accepted auto calibration (requested: --unwind); stops judging otherwise. */
void fallback_arm(struct fallback *f, const char *requested, const struct unwind_choice *u,
		  uint64_t origin);
/* An executable mapping of the target; it replaces whatever it overlaps. */
void fallback_map(struct fallback *f, uint64_t start, uint64_t end);
/* The target executed a new image: its mappings are gone and judging stops until the
 * mode for the new image is chosen. */
void fallback_exec(struct fallback *f);
/* One frame-pointer sample of the target (user frames leaf first).  A window it completes
 * is judged, and a failed one's warning goes to out. */
void fallback_sample(struct fallback *f, struct emit *out, uint64_t time, unsigned nkernel,
		     const uint64_t *uips, unsigned nuser);
/* One allocation stack of the target (return addresses leaf first), judged the same way:
 * a window fails on the lower of its CPU and its heap stack quality. */
void fallback_heap_stack(struct fallback *f, struct emit *out, uint64_t time,
			 const uint64_t *uips, unsigned nuser);
/* Every event at or before time has been read: windows that ended by then are judged. */
void fallback_round(struct fallback *f, struct emit *out, uint64_t time);
/* After a failed window: 1 when the recording is to switch to DWARF, with a new FR_TARGET
 * that applies from *since (the next window) for the reason *why; 0 when nothing is to be
 * done (no window failed, or the target has no unwind tables: frame pointers stay, as the
 * window's warning said). */
int fallback_decide(struct fallback *f, uint64_t *since, const char **why);
void fallback_free(struct fallback *f);

#endif
