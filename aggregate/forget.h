/*
 * When the later stages may forget (FR_FORGET, see docs/stream-format.md): the mappings
 * unwind lists as gone, and the names of the threads and processes that ended.  A stack
 * that can name them carries a time at or before the round they wait for (unwind's list
 * comes right before it; an exit waits for a round at or after it), and that round
 * releases every such stack into windows up to the one open then.  So each waits for the
 * end of the window open at its round, and goes out at the first round after it: a frame
 * about that window can no longer follow.  A name is not forgotten when a thread or a
 * process with the same id shows up after the exit (a reused pid): it is the new one's.
 */
#ifndef RP_AGG_FORGET_H
#define RP_AGG_FORGET_H

#include <stddef.h>
#include <stdint.h>

#include "idmap.h"
#include "stream.h"

struct forget_item {
	uint64_t time;             /* the exit; 0 for unwind's list (its round is the next) */
	uint32_t pid, tid;         /* as in FR_FORGET */
	uint32_t *ids, nids;       /* unwind's mappings, or none (a name) */
	uint32_t window;           /* the window open at the round that covered it */
	int armed;                 /* that round came */
	int reused;                /* a name that belongs to a newer thread or process now */
};

struct forget_q {
	struct forget_item *v;
	size_t n, cap;
	struct idmap by_tid, by_pid; /* thread and process names waiting: id -> index + 1 */
};

/* An FR_EXIT: the thread's name (but the main thread's, which is the process's) and, with
 * EXIT_PROCESS, the process's names.  0, or -1 when out of memory. */
int forget_exit(struct forget_q *q, const struct fr_task *t);
/* unwind's FR_FORGET: held until the windows that may name its mappings are written.
 * 0, or -1 when out of memory. */
int forget_frame(struct forget_q *q, const struct fr_forget *f);
/* An FR_COMM or FR_FORK of thread tid of pid at time: a name waiting to be forgotten for
 * an earlier exit of that thread (or process) is now the new one's, and stays. */
void forget_reused(struct forget_q *q, uint32_t pid, uint32_t tid, uint64_t time);
/* Mapping ids that memory still in use names (pins.h), held back when their forget is
 * due, and what is told of each id that goes out. */
struct forget_hold {
	const struct idmap *named;      /* NULL: none is named */
	int (*gone)(void *arg, uint32_t id); /* 0, or -1 when out of memory */
	void *arg;
};
/* Whether a list of unwind's mappings is due at a round while window open_index is open
 * (the caller then gathers what its hold names). */
int forget_due(const struct forget_q *q, uint32_t open_index);
/* At a round: what waits for a round at or before time now waits for window open_index
 * to end; what waited for a window that has ended goes out as FR_FORGET, but the mapping
 * ids hold->named lists, which wait on (hold may be NULL).  0, or -1 on a write error or
 * when out of memory. */
int forget_round(struct forget_q *q, uint64_t time, uint32_t open_index,
		 const struct forget_hold *hold, struct stream_writer *out);
void forget_release(struct forget_q *q);

#endif
