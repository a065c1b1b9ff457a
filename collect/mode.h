/*
 * The unwind mode in effect and how it came about (manual: "Unwinding and automatic
 * fallback"): chosen at the start and after an exec of the target, by --unwind or for auto
 * by the frame-pointer calibration, and changed once by auto's fallback.  Every FR_TARGET
 * shows all of it.
 */
#ifndef COLLECT_MODE_H
#define COLLECT_MODE_H

#include "calib.h"

struct unwind_choice {
	const char *mode;               /* "fp" or "dwarf" */
	char reason[320];               /* why that mode */
	struct calib_result calib;      /* the last calibration's figures */
	char fallback_reason[256];      /* why auto left frame pointers, or empty */
};

struct collect;

/* Chooses the mode for the image the target runs now into c->unwind (for auto, runs the
 * calibration with its own events, which are closed again); sets *resumed when it let a
 * launched command run.  0, or the end reason when the recording had started and ended
 * during the calibration. */
int mode_choose(struct collect *c, int pidfd, int nthreads, int *resumed);
/* Auto's fallback decided (fallback.h): DWARF from now on, because of why. */
void mode_fallback(struct unwind_choice *u, const char *why);

#endif
