/*
 * Windows cut from event time.  Window k covers [origin + k*W, origin + (k+1)*W); the last
 * one ends at the end of the recording.  A closed window goes out as FR_WINDOW_START, its
 * FR_WINDOW_STACKs, any warnings, and FR_WINDOW_END with the window's statistics.
 */
#ifndef RP_WINDOW_H
#define RP_WINDOW_H

#include <stdint.h>

#include "heap.h"
#include "offcpu.h"
#include "physical.h"
#include "reorder.h"
#include "stacktab.h"
#include "stream.h"

struct wstats {
	uint64_t samples, cpu_ns, lost, malformed, dropped, dropped_ns;
	uint64_t usable, unusable, truncated, empty, cycle, out_of_mapping, failed;
	uint64_t late, forced;
};

#ifndef WINDOWS_MAX_GAP /* the fuzz target's is smaller: its inputs are many such events */
#define WINDOWS_MAX_GAP 100000 /* empty windows one event may close: more is a corrupt time */
#endif

struct windows {
	const char *err;     /* why the last call failed, when it was not a write error */
	struct stream_writer *out;
	uint64_t width, reorder_ns, max_pending;
	int have_origin, published_any;
	uint64_t origin;
	uint32_t index;
	uint64_t start, end; /* current window */
	uint64_t exec_at;    /* an exec of the target not yet reached by the windows, or 0 */
	struct frame held;   /* a later FR_TARGET, forwarded after the current window's end */
	uint64_t held_until; /* ... or once the windows reach this time (the frame's since) */
	uint64_t peak_pending;
	struct stacktab tab;
	struct wstats st;
	struct offcpu_agg *off; /* the off-CPU side of the same windows (offcpu.h) */
	struct heap_agg *heap;  /* the heap side (heap.h), once the target has one */
	struct physical_agg *phys; /* the physical side (physical.h), the same */
	int have_debuginfod;    /* unwind's debuginfod counts, once a frame brought them */
	struct fr_debuginfod debuginfod;
	int have_jit;           /* unwind's JIT statistics, the latest (totals so far) */
	struct fr_jit jit;
};

/* What the windows are set up with: their length and stack cap, and the bounds of the
 * reorder buffer that feeds them, which every window end reports. */
struct window_opts {
	uint64_t width, max_stacks;
	uint64_t reorder_ns, max_pending;
};

int windows_init(struct windows *w, struct stream_writer *out, const struct window_opts *o);
/* The recording's window length, from its first target frame, before the first window
 * starts: a reorder window longer than that is cut to it.  The reorder window in effect. */
uint64_t windows_set_width(struct windows *w, uint64_t width);
/* Fixes window 0's start if not yet fixed. */
void windows_origin(struct windows *w, uint64_t t);
/* Adds one released stack sample.  0, or -1 on a write error / out of memory. */
int windows_add(struct windows *w, const struct stack_event *s);
/* A heap or page event at time was released: the windows move on to it (0, or -1 as above); one
 * older than the open window counts in it, late. */
int windows_heap_at(struct windows *w, uint64_t time);
/* Closes every window that ends at or before t (an event at t is past them). */
int windows_advance(struct windows *w, uint64_t t);
/* Closes every window that ends before t: what a round or the reorder window at t closes.
 * A window that ends exactly at t stays open, because the recording may end at t and that
 * window would then be the final one. */
int windows_close_before(struct windows *w, uint64_t t);
/* The target executed a new image at t: the window holding t ends there (a complete,
 * shorter window) and the next one starts at t with the usual length. */
void windows_exec(struct windows *w, uint64_t t);
/* Keeps a copy of f (a later FR_TARGET) to forward right after the current window's end,
 * so that window is published under the target it was recorded for.  0, or -1. */
int windows_hold(struct windows *w, const struct frame *f);
/* The same for a target frame that applies from time since (the unwind fallback): it is
 * forwarded once every window that starts before since has been written. */
int windows_hold_until(struct windows *w, const struct frame *f, uint64_t since);
/* The latest counts of unwind's debuginfod client: every window written from now on
 * carries them as debuginfod.* statistics. */
void windows_debuginfod(struct windows *w, const struct fr_debuginfod *d);
/* Where the current window ends: its regular end, or an exec inside it. */
uint64_t windows_current_end(struct windows *w);
/* Ends the recording at t: closes the windows that end before t as complete and the one
 * t falls in or ends as the final one (WINDOW_FINAL), the only one of the run. */
int windows_finish(struct windows *w, uint64_t t);
void windows_release(struct windows *w);

#endif
