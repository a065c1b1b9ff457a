/*
 * Allocation samples (FR_ALLOC) into FR_HEAP_STACK: the user stack is checked and
 * symbolized as a CPU sample's is, by frame pointers or, when the frame carries the
 * registers and a stack copy (--unwind dwarf), with the modules' CFI.  Every address of an
 * allocation stack is a return address, the leaf too (where the allocator returned to), so
 * the leaf is resolved at that address - 1, inside the call, as the frames above it are.
 */
#ifndef RP_UNWIND_HEAPSTACK_H
#define RP_UNWIND_HEAPSTACK_H

#include "dwarfstack.h"
#include "resolve.h"
#include "stream.h"

/* Writes the resolved allocation (after any definitions it needs).  0, or -1 on a write
 * error or out of memory. */
int heapstack_resolve(struct resolver *r, struct dwarfstack *dw, const struct fr_alloc *in,
		      struct stream_writer *out);

#endif
