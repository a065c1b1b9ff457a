/*
 * Off-CPU intervals (FR_OFFCPU) into FR_OFFCPU_STACK: the stacks of the switch-out are
 * checked and symbolized as a frame-pointer sample's, and the phase becomes the stack's
 * root frame ("off-CPU blocked", "scheduling delay (preempted)", "scheduling delay
 * (yielded)") in a mapping "[off-cpu]" of its own.  The further intervals a frame carries
 * share its stacks: they pass through, resolved once for all.
 */
#ifndef RP_UNWIND_OFFCPU_H
#define RP_UNWIND_OFFCPU_H

#include "resolve.h"
#include "stream.h"

/* Writes the resolved interval (after any definitions it needs).  0, or -1 on a write
 * error. */
int offcpu_resolve(struct resolver *r, const struct fr_offcpu *in, struct stream_writer *out);

#endif
