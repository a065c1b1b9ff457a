/*
 * A cached debug file's unit index (unwind/dbgindex.h): what is written reads back the same,
 * and a file that does not fit its copy, or breaks any of the orders and bounds the reader
 * relies on, is refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../unwind/dbgindex.h"
#include "le.h"

#include "check.h"

static uint64_t dies[3] = { 11, 400, 2000 };
static uint8_t state[3] = { DBGIX_LAZY, DBGIX_EAGER, DBGIX_NONE };
static struct dbgix_range ranges[3] = { { 0x1000, 0x1800, 0 }, { 0x1000, 0x1100, 0 },
					{ 0x1800, 0x1900, 0 } };
static const struct dbgindex good = { 9000, 4000, dies, state, 3, ranges, 3 };

/* The bytes of good, changed at off by v (width 1, 4 or 8), then parsed: 0 or -1. */
static int
parse_changed(size_t off, unsigned width, uint64_t v)
{
	size_t n = 0;
	uint8_t *p = dbgindex_encode(&good, &n);
	struct dbgindex ix;
	int rc;

	if (!p)
		return -2;
	if (width == 1)
		p[off] = (uint8_t)v;
	else if (width == 4)
		st32(p + off, (uint32_t)v);
	else
		st64(p + off, v);
	rc = dbgindex_parse(p, n, 9000, 4000, &ix);
	if (rc == 0)
		dbgindex_free(&ix);
	free(p);
	return rc;
}

static void
test_round_trip(void)
{
	size_t n = 0;
	uint8_t *p = dbgindex_encode(&good, &n);
	struct dbgindex ix;

	CHECK(p != NULL && n == 32 + 3 * 8 + 8 + 3 * 24);
	CHECK(dbgindex_parse(p, n, 9000, 4000, &ix) == 0);
	CHECK(ix.nunits == 3 && ix.nranges == 3);
	CHECK(memcmp(ix.dies, dies, sizeof(dies)) == 0 && memcmp(ix.state, state, 3) == 0);
	CHECK(ix.ranges[2].lo == 0x1800 && ix.ranges[2].hi == 0x1900 && ix.ranges[2].unit == 0);
	dbgindex_free(&ix);
	/* another copy, or another .debug_info: a miss */
	CHECK(dbgindex_parse(p, n, 9001, 4000, &ix) < 0);
	CHECK(dbgindex_parse(p, n, 9000, 4001, &ix) < 0);
	/* cut short, or longer than its counts say */
	CHECK(dbgindex_parse(p, n - 1, 9000, 4000, &ix) < 0);
	CHECK(dbgindex_parse(p, 16, 9000, 4000, &ix) < 0);
	free(p);
	/* through a file, as the cache reads it */
	char path[] = "/tmp/dbgindex_test_XXXXXX";
	int fd = mkstemp(path);
	p = dbgindex_encode(&good, &n);
	CHECK(fd >= 0 && p && write(fd, p, n) == (ssize_t)n);
	close(fd);
	CHECK(dbgindex_read(path, 9000, 4000, &ix) == 0 && ix.nunits == 3);
	dbgindex_free(&ix);
	CHECK(dbgindex_read("/nonexistent/x.index", 9000, 4000, &ix) < 0);
	unlink(path);
	free(p);
}

static void
test_refused(void)
{
	const size_t units = 32, states = units + 24, rng = states + 8;

	CHECK(parse_changed(0, 1, 'X') < 0);                    /* magic */
	CHECK(parse_changed(24, 4, 4) < 0);                     /* unit count off */
	CHECK(parse_changed(28, 4, 2) < 0);                     /* range count off */
	CHECK(parse_changed(24, 4, DBGIX_MAX_UNITS + 1) < 0);
	CHECK(parse_changed(units + 8, 8, 4000) < 0);           /* a DIE past .debug_info */
	CHECK(parse_changed(units + 8, 8, 11) < 0);             /* units out of order */
	CHECK(parse_changed(states + 1, 1, 3) < 0);             /* an unknown state */
	CHECK(parse_changed(states, 1, DBGIX_NONE) < 0);        /* ranges of a unit not lazy */
	CHECK(parse_changed(rng + 16, 4, 3) < 0);               /* a range's unit unknown */
	CHECK(parse_changed(rng + 8, 8, 0x1000) < 0);           /* lo == hi */
	CHECK(parse_changed(rng + 2 * 24, 8, 0x800) < 0);       /* ranges out of order */
	CHECK(parse_changed(states + 3, 1, 1) < 0);             /* padding not zero */
	CHECK(parse_changed(rng + 20, 4, 1) < 0);
	CHECK(parse_changed(rng, 8, 0x1000) == 0);              /* the unchanged bytes pass */
}

int
main(void)
{
	test_round_trip();
	test_refused();
	printf("dbgindex_test: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
