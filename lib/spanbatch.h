/*
 * Off-CPU pieces gathered by group (a thread at one stack) and written as packed spans, one
 * frame per group (docs/stream-format.md: the further intervals of offcpu and offcpu-stack).
 * collect groups a drain's pieces this way, aggregate the pieces it forwards: each group's
 * pieces keep the order they were added in.
 */
#ifndef RP_SPANBATCH_H
#define RP_SPANBATCH_H

#include <stddef.h>
#include <stdint.h>

#include "stream.h"

struct spanbatch_piece {
	uint32_t group;
	struct offcpu_span s;
};

struct spanbatch {
	size_t extra_bytes;      /* set before the first add: bytes a piece carries besides its
				  * span (collect: its stack-top words), packed like the spans */
	struct spanbatch_piece *pieces;
	size_t n, cap;
	uint8_t *extra;          /* extra_bytes per piece, in the order added */
	size_t cap_extra;
	uint8_t *packed_extra;   /* the same, grouped as the spans of a flush */
	size_t cap_packed_extra;
	uint32_t *start;         /* per group: where its spans begin, then end */
	size_t cap_start;
	uint8_t *spans;          /* the packed spans of a flush, grouped */
	size_t cap_spans;
};

/* Adds a piece of group (an index the caller gives, from 0), with extra_bytes at extra
 * (NULL when extra_bytes is 0).  0, or -1 when out of memory. */
int spanbatch_add(struct spanbatch *b, uint32_t group, const struct offcpu_span *s,
		  const void *extra);
/* Calls put for groups 0 .. ngroups-1 that have pieces, in that order, with at most
 * STREAM_MAX_SPANS + 1 packed spans a call (a group with more gets several) and their
 * extra bytes packed alike (NULL when extra_bytes is 0), then empties the batch.  0, -1
 * when out of memory, or put's first non-zero result. */
int spanbatch_flush(struct spanbatch *b, size_t ngroups,
		    int (*put)(void *arg, uint32_t group, const uint8_t *spans,
			       const uint8_t *extra, uint32_t n),
		    void *arg);
void spanbatch_release(struct spanbatch *b);

#endif
