/* aggregate's physical side: the scaling of sampled pages (rounded to the nearest,
 * saturating), the profiles a target asks for, which losses stop physical-usage, and the
 * arithmetic of tracked pages over the heap side's tables and their bound.  tests/physical_stream.bats
 * runs the same through the stages. */
/* The sources themselves, with a bound of 4 tracked allocations to reach. */
#define HEAP_AGG_MAX_LIVE 4
#include "../../aggregate/heap.c"
#include "../../aggregate/physical.c"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "frametab.h"
#include "stream.h"

#include "check.h"

#define PID 7

static struct stream_writer enc;        /* encodes the input frames */

static void
feed(struct physical_agg *p, uint32_t type, const void *v)
{
	uint32_t len;
	const uint8_t *d = stream_frame_encode(&enc, type, v, &len);
	char err[200];
	CHECK(d != NULL);
	struct frame f = { type, len, d };
	CHECK(physical_agg_frame(p, &f, err, sizeof(err)) == 0);
}

static void
page(struct physical_agg *p, uint32_t leaf, uint64_t pfn, uint32_t order, uint32_t flags)
{
	static struct fr_page_stack s;
	memset(&s, 0, sizeof(s));
	s = (struct fr_page_stack){ .time = 1, .pid = PID, .tid = PID, .pfn = pfn,
				    .order = order, .flags = flags, .stack_flags = STACK_USABLE,
				    .nlocs = 1 };
	s.locs[0] = leaf;
	feed(p, FR_PAGE_STACK, &s);
}

static void
page_free(struct physical_agg *p, uint64_t pfn)
{
	struct fr_page_free f = { 2, PID, pfn, 0 };
	feed(p, FR_PAGE_FREE, &f);
}

static uint64_t
stat(const struct physical_agg *p, const char *k)
{
	static struct fr_stat st[64];
	uint16_t n = physical_agg_stats(p, st, 64);
	for (uint16_t i = 0; i < n; i++)
		if (str_eq(st[i].key, k))
			return st[i].value;
	return ~0ull;
}

static void
target(struct physical_agg *p, const char *profiles, uint32_t percent)
{
	struct fr_target t = { .flags = TARGET_PHYSICAL, .physical_percent = percent,
			       .profiles = { profiles, (uint16_t)strlen(profiles) } };
	physical_agg_target(p, &t);
}

static void
test_scale(void)
{
	CHECK(physical_scale(5, 10) == 50);
	CHECK(physical_scale(5, 3) == 167);             /* 166.67 */
	CHECK(physical_scale(20480, 3) == 682667);      /* 682666.67 */
	CHECK(physical_scale(1, 3) == 33);              /* 33.33 */
	CHECK(physical_scale(1, 2) == 50);
	CHECK(physical_scale(0, 7) == 0);
	CHECK(physical_scale(12345, 100) == 12345);
	CHECK(physical_scale(UINT64_MAX / 2, 1) == UINT64_MAX);
}

static void
test_target(void)
{
	struct physical_agg p;
	CHECK(physical_agg_init(&p, 10) == 0);
	target(&p, "cpu,physical-alloc", 25);
	CHECK(p.alloc && !p.usage && p.percent == 25);
	target(&p, "physical-usage", 100);
	CHECK(!p.alloc && p.usage);
	/* Neither named (an older producer), or a name that only starts like one: both. */
	target(&p, "cpu,physical-allocs", 5);
	CHECK(p.alloc && p.usage && p.percent == 5);
	physical_agg_release(&p);
}

static void
test_lost(void)
{
	struct physical_agg p;
	CHECK(physical_agg_init(&p, 10) == 0);
	target(&p, "physical-alloc,physical-usage", 10);
	struct fr_lost l = { 1, 12, LOST_PAGE_RING };
	CHECK(physical_agg_lost(&p, &l) == -1);
	CHECK(strcmp(p.err, "physical-usage: 12 page events lost (the BPF ring buffer was "
		     "full): the usage would be wrong; lower --physical-memory-probability") == 0);
	l.kind = LOST_PAGE_UNTRACKED;
	CHECK(physical_agg_lost(&p, &l) == -1 && strstr(p.err, "not tracked"));
	l.kind = LOST_PAGE_STACK;       /* a stack missing: the pages are still counted */
	CHECK(physical_agg_lost(&p, &l) == 1);
	l = (struct fr_lost){ 1, 0, LOST_PAGE_RING };   /* nothing lost */
	CHECK(physical_agg_lost(&p, &l) == 1);
	l.kind = LOST_HEAP_RING;        /* not a page kind */
	CHECK(physical_agg_lost(&p, &l) == 0);
	target(&p, "physical-alloc", 10);
	l = (struct fr_lost){ 1, 4, LOST_PAGE_RING };
	CHECK(physical_agg_lost(&p, &l) == 1);
	CHECK(stat(&p, "physical.ring_buffer_drops") == 16);
	CHECK(stat(&p, "physical.untracked_allocations") == 12);
	CHECK(stat(&p, "physical.stack_failures") == 12);
	physical_agg_release(&p);
}

/* Tracked pages: an order's 2^order pages until the free of its pfn; an untracked
 * allocation is counted once, as allocated; usage is never scaled. */
static void
test_pages(struct stream_writer *out)
{
	struct physical_agg p;
	CHECK(physical_agg_init(&p, 10) == 0);
	target(&p, "physical-alloc,physical-usage", 10);
	page(&p, 1, 0x100, 3, 0);
	page(&p, 1, 0x200, 0, PAGE_UNTRACKED);
	page(&p, 2, 0x300, 1, 0);
	page_free(&p, 0x100);
	page_free(&p, 0x200);           /* never tracked */
	CHECK(physical_agg_put(&p, out, 0, 0) == 0);
	CHECK(stat(&p, "physical.alloc_pages") == 110 && stat(&p, "physical.alloc_bytes") ==
	      110 * 4096);
	CHECK(stat(&p, "physical.usage_pages") == 2 && stat(&p, "physical.usage_bytes") == 8192);
	CHECK(stat(&p, "physical.frees") == 1 && stat(&p, "physical.unmatched_frees") == 1);
	CHECK(stat(&p, "physical.tracked_allocations") == 1);
	CHECK(stat(&p, "physical.distinct_stacks") == 2 && stat(&p, "physical.samples") == 3);
	CHECK(physical_agg_next(&p) == 0);
	physical_agg_window(&p, 1);
	/* The next window: only stack 2 still holds pages; its usage stays. */
	CHECK(physical_agg_put(&p, out, 1, 0) == 0);
	CHECK(stat(&p, "physical.alloc_pages") == 0 && stat(&p, "physical.usage_pages") == 2);
	CHECK(stat(&p, "physical.distinct_stacks") == 1);
	physical_agg_release(&p);
}

/* Past the bound, an allocation counts as allocated and as an eviction, not as tracked. */
static void
test_bound(struct stream_writer *out)
{
	struct physical_agg p;
	CHECK(physical_agg_init(&p, 10) == 0);
	target(&p, "physical-usage", 100);
	for (uint64_t pfn = 1; pfn <= 6; pfn++)
		page(&p, 1, pfn, 0, 0);
	page_free(&p, 1);
	page(&p, 1, 7, 0, 0);           /* room again */
	CHECK(physical_agg_put(&p, out, 0, 0) == 0);
	CHECK(stat(&p, "physical.tracked_evictions") == 2);
	CHECK(stat(&p, "physical.alloc_pages") == 7 && stat(&p, "physical.usage_pages") == 4);
	CHECK(stat(&p, "physical.tracked_allocations") == 4);
	/* The evicted pages' frees match nothing. */
	page_free(&p, 5);
	page_free(&p, 6);
	CHECK(stat(&p, "physical.unmatched_frees") == 2);
	physical_agg_release(&p);
}

int
main(void)
{
	int fd = open("/dev/null", O_WRONLY);
	struct stream_writer out;
	struct stream_header hdr = { .version = STREAM_VERSION, .clockid = 1, .e_machine = 62 };
	CHECK(fd >= 0);
	enc.fd = fd;
	CHECK(stream_writer_open(&out, fd, "out", &hdr) == 0);
	test_scale();
	test_target();
	test_lost();
	test_pages(&out);
	test_bound(&out);
	stream_writer_release(&out);
	stream_writer_release(&enc);
	close(fd);
	printf("physical_agg_test: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
