/*
 * Sampled heap state in windows (docs/heap.md).  Allocation stacks (FR_HEAP_STACK) and the
 * frees and moves of sampled blocks (FR_HEAP_FREE) are released from the reorder buffer in
 * time order, with the CPU stacks.  Each distinct stack (pid, tid, locations) keeps its
 * weighted allocations of the current window (alloc_*) and its weighted live samples
 * (inuse_*), which persist across windows since the attach: a block in the live table
 * (pid, address) adds to its stack's in-use values until its free or a reset takes it out
 * again, so in-use never goes below zero, and the free of a block never sampled changes
 * nothing.  --max-stacks bounds the stacks each window exports: a stack new to a full
 * window is left out (its values count as aggregation drops) while its blocks are still
 * tracked.  A reset (FR_HEAP_RESET: an exec, a reattach) forgets every block.
 */
#ifndef RP_AGG_HEAP_H
#define RP_AGG_HEAP_H

#include <stddef.h>
#include <stdint.h>

#include "stream.h"

/* Sampled blocks tracked at once: more is a corrupt stream's doing (collect's program
 * tracks at most 262,144); further blocks count as allocations only. */
#ifndef HEAP_AGG_MAX_LIVE /* the unit test's is small */
#define HEAP_AGG_MAX_LIVE (1u << 22)
#endif

struct heap_entry {
	uint64_t hash;
	uint32_t pid, tid;
	uint64_t alloc_objects, alloc_space;   /* this window */
	uint64_t inuse_objects, inuse_space;   /* its live blocks */
	uint64_t nlive;
	uint32_t admitted;     /* index + 1 of the window that exports it, 0: none yet */
	uint16_t nlocs;
	uint32_t locs[];
};

struct heap_block {
	struct heap_block *next;
	uint64_t addr, size, weight;
	uint32_t pid;
	struct heap_entry *e;
};

struct heap_stats {
	uint64_t samples, frees, moves, unmatched, resets;
	uint64_t usable, unusable;
	uint64_t ring_drops, evictions, unfinished, stack_errors;
	/* What the window's stacks as written add up to, and what --max-stacks left out. */
	uint64_t alloc_objects, alloc_space, inuse_objects, inuse_space;
	uint64_t dropped_alloc_objects, dropped_alloc_space;
	uint64_t dropped_inuse_objects, dropped_inuse_space;
	uint64_t distinct;
};

struct heap_agg {
	struct heap_entry **slots; /* open addressing, power of two; rebuilt at window ends */
	size_t nslots, n;
	struct heap_block **blocks; /* chained by (pid, addr) */
	size_t nbuckets, nblocks;
	uint64_t changes;          /* blocks added and dropped: whether pins.h must look again */
	size_t max_stacks, admitted;
	uint32_t window;           /* index + 1 of the open window */
	struct heap_stats st;
};

int heap_agg_init(struct heap_agg *h, size_t max_stacks);
/* The window with this index is open (its stacks are admitted under it). */
void heap_agg_window(struct heap_agg *h, uint32_t index);
/* One released frame: FR_HEAP_STACK, FR_HEAP_FREE or FR_HEAP_RESET.  0, or -1 with a
 * reason in err (corrupt, out of memory). */
int heap_agg_frame(struct heap_agg *h, const struct frame *f, char *err, size_t errlen);
/* An FR_LOST of one of the LOST_HEAP_* kinds: 1 when it was one. */
int heap_agg_lost(struct heap_agg *h, const struct fr_lost *l);
/* For the window being closed: its FR_WINDOW_HEAP_STACKs, a warning when the stack cap
 * left stacks out, and its statistics (appended to stats, at most room; returns how many).
 * Then the window's allocations restart and stacks without live blocks are dropped. */
int heap_agg_put(struct heap_agg *h, struct stream_writer *out, uint32_t index,
		 uint64_t start);
uint16_t heap_agg_stats(const struct heap_agg *h, struct fr_stat *stats, uint16_t room);
int heap_agg_next(struct heap_agg *h);
void heap_agg_release(struct heap_agg *h);

/* The stack table and the live table for another front end over the same arithmetic
 * (physical.h: a page allocation is a block at its pfn). */
/* The entry of stack (pid, tid, locs), made when new; NULL when out of memory. */
struct heap_entry *heap_agg_entry(struct heap_agg *h, uint32_t pid, uint32_t tid,
				  const uint32_t *locs, uint16_t nlocs);
/* weight samples of size at addr for e's stack, in the open window (admitted under the
 * stack cap), and with track a live block of (pid, addr) replacing one whose free was
 * lost (HEAP_AGG_MAX_LIVE bounds them: more count as evictions).  0, or -1 out of memory. */
int heap_agg_add(struct heap_agg *h, struct heap_entry *e, uint32_t pid, uint64_t addr,
		 uint64_t size, uint64_t weight, int track);
/* The live block of (pid, addr) goes: 1, or 0 when there is none. */
int heap_agg_drop(struct heap_agg *h, uint32_t pid, uint64_t addr);
/* Every live block of pid goes: the process ended, or replaced its image, and its memory
 * with it. */
void heap_agg_gone(struct heap_agg *h, uint32_t pid);
/* Each stack of the closing window (allocations in it or live blocks), admitted when
 * there is room: put(arg, e, admitted) for each; the first failure (-1) stops. */
typedef int heap_agg_put_fn(void *arg, const struct heap_entry *e, int admitted);
int heap_agg_each(struct heap_agg *h, heap_agg_put_fn *put, void *arg);

#endif
