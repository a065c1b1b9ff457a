/*
 * When the later stages may forget an ended thread or process (FR_FORGET, see
 * docs/stream-format.md).  Their stacks carry times at or before the exit, and every one
 * of those has come once a round at or after the exit has: released by that round, they
 * are counted in windows up to the one open then.  So an exit waits for such a round, then
 * for the end of the window open at that round, and its FR_FORGET goes out at the first
 * round after that window-end: a frame about that window can no longer follow.
 */
#ifndef RP_AGG_FORGET_H
#define RP_AGG_FORGET_H

#include <stddef.h>
#include <stdint.h>

#include "stream.h"

struct forget_exit {
	uint64_t time;
	uint32_t pid, tid, flags;  /* flags: EXIT_PROCESS */
	uint32_t window;           /* the window open at the round that covered it */
	int armed;                 /* that round came */
};

struct forget_q {
	struct forget_exit *v;
	size_t n, cap;
};

/* An FR_EXIT: queues the thread (and with EXIT_PROCESS its process).  0, or -1 when out of
 * memory. */
int forget_push(struct forget_q *q, const struct fr_task *t);
/* At a round: exits at or before time now wait for window open_index to end; those whose
 * window has ended before open_index go out as FR_FORGET: a thread other than the main one
 * by itself, then, for the last thread, the process (with every thread's name).  0, or -1
 * on a write error. */
int forget_round(struct forget_q *q, uint64_t time, uint32_t open_index,
		 struct stream_writer *out);
void forget_release(struct forget_q *q);

#endif
