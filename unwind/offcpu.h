/*
 * Off-CPU intervals (FR_OFFCPU) into FR_OFFCPU_STACK: the stacks of the switch-out are
 * checked and symbolized as a frame-pointer sample's, and the phase becomes the stack's
 * root frame ("off-CPU blocked", "scheduling delay (preempted)", "scheduling delay
 * (yielded)") in a mapping "[off-cpu]" of its own.  The further intervals a frame carries
 * share its stacks: they pass through, resolved once for all.
 *
 * The kernel's frame-pointer walk misses one frame whenever the user leaf has set up no
 * frame of its own, as a C library's system-call wrapper has not: the walk's first step
 * reads the caller's frame, so the leaf's caller is skipped (read, then the caller's
 * caller).  When the frame carries the words at the stack pointer (fr_offcpu.top), the
 * leaf's CFI says which of them is that return address, and it is put back in.  Intervals
 * of one frame may have different callers: they are written as one frame per caller.  A
 * frame whose walk stopped at the leaf (the frame pointer was not one) carries a copy of
 * the top of the user stack instead: it is walked with the CFI, as a DWARF sample.
 */
#ifndef RP_UNWIND_OFFCPU_H
#define RP_UNWIND_OFFCPU_H

#include "dwarfstack.h"
#include "resolve.h"
#include "stream.h"

/* Writes the resolved intervals (after any definitions they need): one frame, or one per
 * caller put back.  dw: the CFI tables.  0, or -1 on a write error or out of memory. */
int offcpu_resolve(struct resolver *r, struct dwarfstack *dw, const struct fr_offcpu *in,
		   struct stream_writer *out);

#endif
