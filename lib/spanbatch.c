#include "spanbatch.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"

int
spanbatch_add(struct spanbatch *b, uint32_t group, const struct offcpu_span *s,
	      const void *extra)
{
	size_t x = b->extra_bytes;
	if (grow_array((void **)&b->pieces, &b->cap, b->n, 1, sizeof(*b->pieces)) < 0 ||
	    (x && grow_array((void **)&b->extra, &b->cap_extra, b->n * x, x, 1) < 0))
		return -1;
	if (x)
		memcpy(b->extra + b->n * x, extra, x);
	b->pieces[b->n++] = (struct spanbatch_piece){ .group = group, .s = *s };
	return 0;
}

int
spanbatch_flush(struct spanbatch *b, size_t ngroups,
		int (*put)(void *arg, uint32_t group, const uint8_t *spans,
			   const uint8_t *extra, uint32_t n),
		void *arg)
{
	size_t x = b->extra_bytes;
	if (!b->n)
		return 0;
	if (grow_array((void **)&b->start, &b->cap_start, 0, ngroups + 1, sizeof(*b->start)) < 0 ||
	    grow_array((void **)&b->spans, &b->cap_spans, 0, b->n * OFFCPU_SPAN_BYTES, 1) < 0 ||
	    (x && grow_array((void **)&b->packed_extra, &b->cap_packed_extra, 0, b->n * x, 1) < 0))
		return -1;
	/* A counting sort by group keeps each group's pieces in their order. */
	uint32_t *start = b->start;
	memset(start, 0, (ngroups + 1) * sizeof(*start));
	for (size_t i = 0; i < b->n; i++)
		start[b->pieces[i].group + 1]++;
	for (size_t g = 0; g < ngroups; g++)
		start[g + 1] += start[g];
	for (size_t i = 0; i < b->n; i++) {
		uint32_t at = start[b->pieces[i].group]++;
		stream_span_pack(b->spans, at, &b->pieces[i].s);
		if (x)
			memcpy(b->packed_extra + (size_t)at * x, b->extra + i * x, x);
	}
	/* start[g] is now where group g ends, and group g + 1 begins. */
	b->n = 0;
	uint32_t from = 0;
	for (size_t g = 0; g < ngroups; g++) {
		for (uint32_t at = from; at < start[g];) {
			uint32_t n = start[g] - at;
			if (n > STREAM_MAX_SPANS + 1)
				n = STREAM_MAX_SPANS + 1;
			int rc = put(arg, (uint32_t)g, b->spans + (size_t)at * OFFCPU_SPAN_BYTES,
				     x ? b->packed_extra + (size_t)at * x : NULL, n);
			if (rc)
				return rc;
			at += n;
		}
		from = start[g];
	}
	return 0;
}

void
spanbatch_release(struct spanbatch *b)
{
	free(b->pieces);
	free(b->start);
	free(b->spans);
	free(b->extra);
	free(b->packed_extra);
	memset(b, 0, sizeof(*b));
}
