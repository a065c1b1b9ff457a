/*
 * Physical page allocations (FR_PAGE_ALLOC) into FR_PAGE_STACK: the user stack, by frame
 * pointers, is checked and symbolized as a CPU sample's is.  Unlike an allocator call's,
 * the leaf is where the task entered the kernel, most often the instruction whose page fault
 * took the pages, so it is resolved at its own address, as a CPU sample's leaf.
 */
#ifndef RP_UNWIND_PAGESTACK_H
#define RP_UNWIND_PAGESTACK_H

#include "resolve.h"
#include "stream.h"

/* Writes the resolved allocation (after any definitions it needs).  0, or -1 on a write
 * error or out of memory. */
int pagestack_resolve(struct resolver *r, const struct fr_page_alloc *in,
		      struct stream_writer *out);

#endif
