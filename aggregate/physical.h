/*
 * The physical memory profiles in windows (docs/physical.md), over heap.h's arithmetic: a
 * sampled page allocation (FR_PAGE_STACK, released from the reorder buffer in time order)
 * is a block of 2^order pages of 4096 bytes at (pid, pfn) for its stack (pid, tid,
 * locations), and an FR_PAGE_FREE of (pid, pfn) takes it out again.  Each stack keeps its
 * raw page counts of the window (scaled by 100/probability only when written, rounded to
 * the nearest) and its tracked pages still allocated, never scaled.  An allocation marked
 * PAGE_UNTRACKED counts in the window's allocations only; one on a (pid, pfn) already
 * tracked replaces the block whose free was lost.  --max-stacks bounds the stacks a window
 * exports as for the heap.  With physical-usage asked, an explicit loss of page events
 * (LOST_PAGE_RING, LOST_PAGE_UNTRACKED) is fatal: the usage would be wrong from then on.
 */
#ifndef RP_AGG_PHYSICAL_H
#define RP_AGG_PHYSICAL_H

#include <stddef.h>
#include <stdint.h>

#include "heap.h"
#include "stream.h"

#define PHYSICAL_PAGE_BYTES 4096u

struct physical_stats {
	uint64_t samples, usable, unusable, frees, unmatched;
	uint64_t ring_drops, untracked, stack_errors;
	/* What the window's stacks as written add up to (alloc_* scaled), and what
	 * --max-stacks left out. */
	uint64_t alloc_pages, alloc_bytes, usage_pages, usage_bytes;
	uint64_t dropped_alloc_pages, dropped_alloc_bytes;
	uint64_t dropped_usage_pages, dropped_usage_bytes;
	uint64_t distinct;
};

struct physical_agg {
	struct heap_agg core;   /* objects are pages, space bytes; alloc_* raw */
	int alloc, usage;       /* physical-alloc, physical-usage asked (the target's profiles) */
	uint32_t percent;       /* the sampling percentage, 1..100 */
	struct physical_stats st;
	char err[200];          /* why physical_agg_lost failed */
};

int physical_agg_init(struct physical_agg *p, size_t max_stacks);
/* An FR_TARGET flagged TARGET_PHYSICAL: the profiles it asks and its percentage. */
void physical_agg_target(struct physical_agg *p, const struct fr_target *t);
/* The window with this index is open. */
void physical_agg_window(struct physical_agg *p, uint32_t index);
/* One released FR_PAGE_STACK or FR_PAGE_FREE.  0, or -1 with a reason in err. */
int physical_agg_frame(struct physical_agg *p, const struct frame *f, char *err,
		       size_t errlen);
/* An FR_LOST: 0 when not of a LOST_PAGE_* kind, 1 when counted, -1 when it makes the
 * usage profile wrong (physical-usage asked, pages lost or untracked): p->err says so. */
int physical_agg_lost(struct physical_agg *p, const struct fr_lost *l);
/* For the window being closed: its FR_WINDOW_PAGE_STACKs and a warning when the stack cap
 * left stacks out.  0, or -1 on a write error. */
int physical_agg_put(struct physical_agg *p, struct stream_writer *out, uint32_t index,
		     uint64_t start);
/* Its physical.* statistics (appended to stats, at most room; returns how many). */
uint16_t physical_agg_stats(const struct physical_agg *p, struct fr_stat *stats,
			    uint16_t room);
/* The next window: allocations restart, stacks without tracked pages go. */
int physical_agg_next(struct physical_agg *p);
void physical_agg_release(struct physical_agg *p);
/* raw × 100 / percent, rounded to the nearest (saturating). */
uint64_t physical_scale(uint64_t raw, uint32_t percent);

#endif
