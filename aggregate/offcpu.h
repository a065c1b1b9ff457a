/*
 * Off-CPU intervals in windows.  FR_OFFCPU_STACK pieces wait in their own bounded queue
 * (a min-heap on start time, apart from the CPU reorder buffer) until a round or the
 * reorder window says nothing older can come; a released piece is split at the current
 * window's end, the rest waiting for the next window, so the nanoseconds of an interval
 * that crosses boundaries add up to its length across the windows.  An interval counts
 * once, in the window of its first piece.  Each piece is forwarded as it was counted, cut
 * at the window's end, so like FR_STACK every FR_OFFCPU_STACK between two window ends belongs
 * to the window that closes next; the counted pieces of one group (the intervals of one
 * input frame) wait to go out together as one frame, until the next round, the window's
 * end or a full batch.  Each window's distinct off-CPU stacks go out as
 * FR_WINDOW_OFFCPU_STACK, with "off_cpu.*" statistics in its FR_WINDOW_END.
 */
#ifndef RP_AGG_OFFCPU_H
#define RP_AGG_OFFCPU_H

#include <stddef.h>
#include <stdint.h>

#include "spanbatch.h"
#include "stacktab.h"
#include "stream.h"

struct windows;

/* What the pieces of one FR_OFFCPU_STACK share: the thread, phase and stack. */
struct offcpu_group {
	uint32_t refs;         /* queued pieces, and a forward waiting to be written */
	uint32_t fwd;          /* its forward group + 1 while pieces wait to go out, or 0 */
	uint32_t pid, tid, cpu, phase, flags, stack_flags; /* flags: those of all its pieces */
	uint16_t nlocs;
	uint32_t locs[];
};

struct offcpu_piece {
	uint64_t start, end;
	uint32_t flags;        /* OFFCPU_SPAN_FLAGS of the piece */
	uint32_t count;        /* 1 when this piece starts its interval */
	struct offcpu_group *g;
};

struct offcpu_stats {
	uint64_t intervals, pieces, late, late_ns, forced; /* intervals: those recorded */
	uint64_t usable, unusable, dropped, dropped_ns;
	uint64_t ring_drops, incomplete, filtered, stack_errors, unsampled;
	/* The sums of the window's stacks as written (weighed): its intervals and nanoseconds,
	 * equal to the pprof's totals. */
	uint64_t written_intervals, written_nanos;
};

/* Counted pieces wait here, by group, to be forwarded a few frames at a time. */
struct offcpu_fwd {
	struct offcpu_group **groups;
	size_t n, cap;
	struct spanbatch pieces;
};

struct offcpu_agg {
	struct offcpu_piece *heap;
	size_t n, cap, max;    /* max: --max-pending-events, for this queue alone */
	size_t peak;
	struct stacktab tab;
	struct offcpu_stats st;
	struct offcpu_fwd fwd;
	uint32_t percent;      /* switch-outs recorded (the target's --offcpu-probability) */
	struct offcpu_group *inflight; /* the group offcpu_agg_push is queueing */
	int keep_pieces;       /* 0: the windows count the pieces, none is kept to go out
	                        * (--windows-only) */
};

int offcpu_agg_init(struct offcpu_agg *o, size_t max_stacks, size_t max_pending);
/* Queues the intervals of one frame.  Before each piece that would take the queue past its
 * bound (max), make_room(arg) is called until there is room (it releases the oldest
 * pieces); without one (NULL) the queue grows.  0, or -1 when out of memory or make_room
 * failed. */
int offcpu_agg_push(struct offcpu_agg *o, const struct fr_offcpu_stack *s,
		    int (*make_room)(void *arg), void *arg);
/* Writes the counted pieces still waiting to be forwarded.  0, or -1. */
int offcpu_agg_flush(struct offcpu_agg *o, struct stream_writer *out);
/* The start of the oldest queued piece, or UINT64_MAX. */
uint64_t offcpu_agg_oldest(const struct offcpu_agg *o);
/* Adds every piece that starts at or before t to the windows, closing those that end
 * before it; nothing is counted past limit (the end of the recording).  0, or -1. */
int offcpu_agg_release(struct offcpu_agg *o, struct windows *w, uint64_t t, uint64_t limit);
/* An FR_LOST of one of the LOST_OFFCPU_* kinds: 1 when it was one. */
int offcpu_agg_lost(struct offcpu_agg *o, const struct fr_lost *l);
/* For the window being closed: its stacks, a warning when the stack cap dropped some, and
 * its statistics (appended to stats, at most room; returns how many).  With a percent
 * below 100 the counts and nanoseconds written are the recorded ones weighed 100/percent,
 * each stack's rounded once, and the totals are their sums. */
int offcpu_agg_put(struct offcpu_agg *o, struct stream_writer *out, uint32_t index,
		   uint64_t start, size_t max_stacks);
uint16_t offcpu_agg_stats(const struct offcpu_agg *o, struct fr_stat *stats, uint16_t room);
void offcpu_agg_clear(struct offcpu_agg *o);
void offcpu_agg_release_all(struct offcpu_agg *o);

#endif
