/*
 * Reads FlameGraph folded text ("frame;frame;...;leaf count" per line, as stackcollapse
 * scripts and emit-collapsed write it) into a flame tree, so emit-svg can draw any folded
 * file and be compared with flamegraph.pl on the same input.  A "_[k]" suffix marks a
 * kernel frame and "_[j]"/"_[i]" are dropped; a bracketed name like "[unknown]" is
 * unsymbolized; the first frame is the process.  Lines without a trailing non-negative
 * integer count are skipped and counted, as flamegraph.pl does.
 */
#ifndef ES_FOLDED_H
#define ES_FOLDED_H

#include <stdint.h>
#include <stdio.h>

#include "flame.h"

struct folded_stats {
	uint64_t lines, ignored;
};

/* Adds every line of f to t.  0, or -1 with t->err (out of memory) or errno set by a
 * read error (t->err empty). */
int folded_read(FILE *f, struct flame *t, struct wframe *frames, struct folded_stats *st);

#endif
