/*
 * The sampled allocations and frees of the window in progress, for the Firefox profile's
 * nativeAllocations tables (docs/heap.md).  aggregate forwards the FR_HEAP_STACK,
 * FR_HEAP_FREE and FR_HEAP_RESET frames in time order before the end of the window that
 * counts them, so, as with the timeline, the entries are cleared at each window end.
 *
 * An allocation weighs weight × size bytes (the estimate its sample stands for); the free
 * of a sampled block weighs minus what its allocation did, in the thread that freed it,
 * and carries the allocation's stack (the probes take no stack at a free).  Both carry the
 * block's number as memoryAddress, which stays with the block when a realloc moves it, so
 * the front end pairs them into retained memory.  Blocks are tracked across windows (a
 * block allocated in one window may be freed in a later one) up to FXA_MAX_LIVE; a reset
 * forgets the blocks of its process.  At most max entries are kept per window, the
 * earliest; the rest are only counted, while the blocks stay tracked.
 */
#ifndef EF_FXALLOC_H
#define EF_FXALLOC_H

#include <stddef.h>
#include <stdint.h>

#include "stream.h"
#include "timeline.h"

/* tl_sample.flags of an entry: a free (negative bytes), not an allocation. */
#define TL_FREE 0x40000000u

/* Sampled blocks tracked at once, as aggregate's table (collect's tracks 262,144). */
#define FXA_MAX_LIVE (1u << 22)

struct fxa_stack;
struct fxa_block;

struct fxalloc {
	struct timeline tl;     /* entries: time, bytes in period, TL_FREE in flags */
	uint64_t *block;        /* per kept entry: its block's number */
	size_t cap_block;
	struct fxa_block **blocks;      /* chained by (pid, addr) */
	size_t nbuckets, nblocks;
	struct fxa_stack **stacks;      /* allocation stacks of the tracked blocks */
	size_t nsbuckets, nstacks;
	uint64_t next_id;       /* the next block's number, from 1 */
	int seen;               /* some heap frame came: the window reports its counts */
};

void fxalloc_init(struct fxalloc *a, uint64_t max);
void fxalloc_release(struct fxalloc *a);
/* The window's entries go; the tracked blocks stay. */
void fxalloc_clear(struct fxalloc *a);
/* One FR_HEAP_STACK, FR_HEAP_FREE or FR_HEAP_RESET, decoded: 0; -1 when out of memory. */
int fxalloc_stack(struct fxalloc *a, const struct fr_heap_stack *s);
int fxalloc_free(struct fxalloc *a, const struct fr_heap_free *f);
void fxalloc_reset(struct fxalloc *a, uint32_t pid);
/* Leaves out the window's entries timed before t: those of a window fanout shed for this
 * emitter (its allocations never came; its frees did, to keep the blocks right). */
void fxalloc_drop_before(struct fxalloc *a, uint64_t t);

#endif
