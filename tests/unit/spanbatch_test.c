/* lib/spanbatch: pieces added in any interleaving come out grouped, groups in index order,
 * each group's pieces in the order they were added, packed as spans; a group of more than
 * STREAM_MAX_SPANS + 1 pieces comes out in several calls; a flush empties the batch; put's
 * error stops the flush; extra bytes per piece come out grouped beside their spans. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spanbatch.h"

#include "check.h"

struct call {
	uint32_t group, n;
	uint64_t first, last; /* starts of its first and last span */
	int ordered;          /* starts increase within the call */
	int extra_ok;         /* each piece's extra bytes hold its start (or none were kept) */
};
static struct call calls[16];
static int ncalls, fail_at = -1;

static int
record(void *arg, uint32_t group, const uint8_t *spans, const uint8_t *extra, uint32_t n)
{
	(void)arg;
	if (ncalls == fail_at)
		return -7;
	struct call *c = &calls[ncalls++];
	c->group = group;
	c->n = n;
	c->first = stream_span_unpack(spans, 0).start;
	c->last = stream_span_unpack(spans, n - 1).start;
	c->ordered = 1;
	for (uint32_t i = 1; i < n; i++)
		if (stream_span_unpack(spans, i).start <= stream_span_unpack(spans, i - 1).start)
			c->ordered = 0;
	c->extra_ok = 1;
	for (uint32_t i = 0; extra && i < n; i++) {
		uint64_t v;
		memcpy(&v, extra + (size_t)i * 16 + 8, sizeof(v));
		if (v != stream_span_unpack(spans, i).start || extra[(size_t)i * 16] != 0xA5)
			c->extra_ok = 0;
	}
	return 0;
}

static int add_failed;

static void
add(struct spanbatch *b, uint32_t group, uint64_t start)
{
	struct offcpu_span s = { start, start + 1, group == 1 ? OFFCPU_CONTINUES : 0 };
	uint8_t extra[16] = { 0xA5 };
	memcpy(extra + 8, &start, sizeof(start));
	if (spanbatch_add(b, group, &s, b->extra_bytes ? extra : NULL) != 0)
		add_failed++;
}

static void
test_groups(void)
{
	struct spanbatch b = { 0 };
	/* Two threads taking turns, a third group with nothing. */
	for (uint64_t t = 0; t < 10; t++)
		add(&b, t % 2 ? 2 : 0, 100 + t);
	ncalls = 0;
	CHECK(spanbatch_flush(&b, 3, record, NULL) == 0);
	CHECK(ncalls == 2);
	CHECK(calls[0].group == 0 && calls[0].n == 5 && calls[0].first == 100 &&
	      calls[0].last == 108 && calls[0].ordered);
	CHECK(calls[1].group == 2 && calls[1].n == 5 && calls[1].first == 101 &&
	      calls[1].last == 109 && calls[1].ordered);
	/* Emptied: a second flush writes nothing. */
	ncalls = 0;
	CHECK(spanbatch_flush(&b, 3, record, NULL) == 0 && ncalls == 0 && b.n == 0);
	spanbatch_release(&b);
}

static void
test_split_and_error(void)
{
	struct spanbatch b = { 0 };
	uint32_t total = STREAM_MAX_SPANS + 1 + 10;
	for (uint32_t i = 0; i < total; i++)
		add(&b, 1, i);
	ncalls = 0;
	CHECK(spanbatch_flush(&b, 2, record, NULL) == 0);
	CHECK(ncalls == 2 && calls[0].n == STREAM_MAX_SPANS + 1 && calls[1].n == 10);
	CHECK(calls[1].first == STREAM_MAX_SPANS + 1 && calls[1].last == total - 1);
	/* put's error ends the flush with it; the batch is empty all the same. */
	add(&b, 0, 5);
	add(&b, 1, 6);
	ncalls = 0;
	fail_at = 1;
	CHECK(spanbatch_flush(&b, 2, record, NULL) == -7 && ncalls == 1 && b.n == 0);
	fail_at = -1;
	spanbatch_release(&b);
}

/* 16 extra bytes a piece (a marker, then the piece's start) travel with their spans. */
static void
test_extra(void)
{
	struct spanbatch b = { .extra_bytes = 16 };
	for (uint64_t t = 0; t < 40; t++)
		add(&b, (uint32_t)(t % 3), 1000 + t);
	ncalls = 0;
	CHECK(spanbatch_flush(&b, 3, record, NULL) == 0);
	CHECK(ncalls == 3);
	for (int i = 0; i < ncalls; i++)
		CHECK(calls[i].extra_ok && calls[i].ordered && calls[i].group == (uint32_t)i);
	CHECK(calls[0].n == 14 && calls[1].n == 13 && calls[2].n == 13);
	spanbatch_release(&b);
}

int
main(void)
{
	test_groups();
	test_extra();
	test_split_and_error();
	CHECK(add_failed == 0);
	printf("spanbatch: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
