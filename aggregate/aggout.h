/*
 * What every side of aggregate's windows (CPU, off-CPU, heap, physical) writes the same
 * way: a window's statistics appended to its end frame's, and a one-line warning.
 */
#ifndef RP_AGG_AGGOUT_H
#define RP_AGG_AGGOUT_H

#include <stddef.h>
#include <stdint.h>

#include "stream.h"

/* One statistic of a literal key. */
#define AGG_STAT(k, v) { .key = { k, sizeof(k) - 1 }, .value = (v) }

/* At most room of the n statistics of all into st: how many. */
uint16_t agg_copy_stats(const struct fr_stat *all, size_t n, struct fr_stat *st,
			uint16_t room);
/* A warning frame at time, its text formatted (cut at 299 bytes).  0, or -1. */
int agg_warning(struct stream_writer *out, uint64_t time, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
