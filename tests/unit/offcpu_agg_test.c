/* aggregate's off-CPU side: pieces are cut at window ends and their nanoseconds add up over
 * the windows to the interval's length; an interval counts once, in the window of its first
 * piece; a piece that arrives after its window was written lands in the open one as late;
 * nothing is counted past the end of the recording.  Every window is read back from the
 * stream it was written to, as emit-pprof would read it. */
#include "../../aggregate/offcpu.h"
#include "../../aggregate/window.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stream.h"

#include "check.h"

#define W 100 /* window width */
#define MAXWIN 16

/* Per window read back: off-CPU nanoseconds and intervals by thread, and two statistics. */
struct win {
	uint64_t nanos[4], count[4];
	uint64_t late, intervals_stat, nanos_stat, recorded_stat, percent_stat;
	uint64_t forwarded;     /* nanoseconds of the FR_OFFCPU_STACK pieces before its start */
	uint64_t fwd_frames, fwd_pieces; /* ... how many frames and pieces they were */
	uint32_t fwd_flags;     /* ... the OFFCPU_CONTINUES/CONTINUED flags they had */
	int ended;
};
static struct win wins[MAXWIN];
static int nwins;

struct fixture {
	char path[64];
	int fd;
	struct stream_writer out;
	struct windows w;
	struct offcpu_agg off;
};

static void
fixture_open(struct fixture *fx)
{
	static const struct stream_header h = { 1, 1, 0, 42, 62 };
	snprintf(fx->path, sizeof(fx->path), "/tmp/offcpu_agg_test.XXXXXX");
	fx->fd = mkstemp(fx->path);
	if (fx->fd < 0 || stream_writer_open(&fx->out, fx->fd, "t", &h) < 0 ||
	    windows_init(&fx->w, &fx->out, &(struct window_opts){ W, 64, 0, 0 }) < 0 ||
	    offcpu_agg_init(&fx->off, 64, 100) < 0)
		abort();
	fx->w.off = &fx->off;
	windows_origin(&fx->w, 1000);
}

static void
fixture_close(struct fixture *fx)
{
	windows_release(&fx->w);
	offcpu_agg_release_all(&fx->off);
	stream_writer_release(&fx->out);
	close(fx->fd);
	unlink(fx->path);
}

static void
readback(struct fixture *fx)
{
	static struct fr_window_end e;
	struct fr_window_stack s;
	static struct fr_offcpu_stack os;
	uint64_t pending = 0, frames = 0, pieces = 0;
	uint32_t flags = 0;
	struct stream_reader rd;
	struct stream_header h;
	struct frame f;
	char err[200];
	int rc;

	nwins = 0;
	CHECK(stream_flush(&fx->out) == 0);
	int fd = open(fx->path, O_RDONLY);
	CHECK(fd >= 0 && stream_reader_open(&rd, fd, "t", &h) == 0);
	while ((rc = stream_read(&rd, &f)) > 0) {
		struct win *x = nwins ? &wins[nwins - 1] : NULL;
		if (f.type == FR_WINDOW_START) {
			if (nwins == MAXWIN)
				abort();
			memset(&wins[nwins], 0, sizeof(wins[0]));
			wins[nwins].fwd_frames = frames;
			wins[nwins].fwd_pieces = pieces;
			wins[nwins].fwd_flags = flags;
			wins[nwins++].forwarded = pending;
			pending = frames = pieces = flags = 0;
		} else if (f.type == FR_OFFCPU_STACK) {
			CHECK(stream_get_offcpu_stack(&f, &os, err, sizeof(err)) == 0);
			frames++;
			for (uint32_t i = 0; i <= os.nmore; i++) {
				struct offcpu_span sp = stream_offcpu_stack_span(&os, i);
				pending += sp.end - sp.start;
				flags |= sp.flags;
				pieces++;
			}
		} else if (f.type == FR_WINDOW_OFFCPU_STACK && x) {
			CHECK(stream_get_window_offcpu_stack(&f, &s, err, sizeof(err)) == 0);
			CHECK(s.tid < 4 && s.nlocs == 2 && s.locs[1] == 99);
			x->nanos[s.tid & 3] += s.nanos;
			x->count[s.tid & 3] += s.count;
		} else if (f.type == FR_WINDOW_END && x) {
			CHECK(stream_get_window_end(&f, &e, err, sizeof(err)) == 0);
			x->ended = 1;
			for (int i = 0; i < e.nstats; i++) {
				if (str_eq(e.stats[i].key, "off_cpu.late_pieces"))
					x->late = e.stats[i].value;
				if (str_eq(e.stats[i].key, "off_cpu.intervals"))
					x->intervals_stat = e.stats[i].value;
				if (str_eq(e.stats[i].key, "off_cpu.nanoseconds"))
					x->nanos_stat = e.stats[i].value;
				if (str_eq(e.stats[i].key, "off_cpu.recorded_intervals"))
					x->recorded_stat = e.stats[i].value;
				if (str_eq(e.stats[i].key, "off_cpu.probability_percent"))
					x->percent_stat = e.stats[i].value;
			}
		}
	}
	CHECK(rc == 0);
	stream_reader_release(&rd);
	close(fd);
}

static struct fr_offcpu_stack os;

static void
piece(struct fixture *fx, uint64_t start, uint64_t end, uint32_t tid, uint32_t flags)
{
	memset(&os, 0, sizeof(os));
	os.start = start;
	os.end = end;
	os.pid = 10;
	os.tid = tid;
	os.phase = PHASE_BLOCKED;
	os.flags = flags;
	os.stack_flags = STACK_USABLE;
	os.nlocs = 2;
	os.locs[0] = 5 + tid;
	os.locs[1] = 99;
	CHECK(offcpu_agg_push(&fx->off, &os, NULL, NULL) == 0);
}

/* One frame (in os) of eleven intervals of thread 1: ten of 15 ns every 20 ns from 1000, and
 * one [1195, 1210) across a window end. */
static void
grouped_frame(void)
{
	static uint8_t spans[16 * OFFCPU_SPAN_BYTES];
	uint32_t n = 0;
	for (uint64_t k = 0; k < 10; k++) {
		struct offcpu_span sp = { 1000 + 20 * k, 1015 + 20 * k, 0 };
		stream_span_pack(spans, n++, &sp);
	}
	stream_span_pack(spans, n++, &(struct offcpu_span){ 1195, 1210, 0 });
	memset(&os, 0, sizeof(os));
	os.pid = 10;
	os.tid = 1;
	os.phase = PHASE_BLOCKED;
	os.stack_flags = STACK_USABLE;
	os.nlocs = 2;
	os.locs[0] = 6;
	os.locs[1] = 99;
	struct offcpu_span first = stream_span_unpack(spans, 0);
	os.start = first.start;
	os.end = first.end;
	os.nmore = n - 1;
	os.more = spans + OFFCPU_SPAN_BYTES;
}

/* What aggregate does at a round: release, then close the windows that ended. */
static void
round_at(struct fixture *fx, uint64_t t)
{
	CHECK(offcpu_agg_release(&fx->off, &fx->w, t, UINT64_MAX) == 0);
	CHECK(windows_advance(&fx->w, t) == 0);
}

static void
finish(struct fixture *fx, uint64_t t)
{
	CHECK(offcpu_agg_release(&fx->off, &fx->w, UINT64_MAX, t) == 0);
	CHECK(windows_finish(&fx->w, t) == 0);
}

/* One interval [1050, 1320) of thread 1 in three pieces as collect cuts them at rounds
 * (1100, 1250), another [1120, 1130) of thread 2 inside one window. */
static void
test_split(void)
{
	struct fixture fx;
	fixture_open(&fx);
	piece(&fx, 1050, 1100, 1, OFFCPU_CONTINUES);
	round_at(&fx, 1100);
	piece(&fx, 1100, 1250, 1, OFFCPU_CONTINUES | OFFCPU_CONTINUED);
	piece(&fx, 1120, 1130, 2, 0);
	round_at(&fx, 1250);
	piece(&fx, 1250, 1320, 1, OFFCPU_CONTINUED);
	finish(&fx, 1400);
	readback(&fx);
	CHECK(nwins == 4);
	/* Windows [1000,1100) [1100,1200) [1200,1300) [1300,1400). */
	CHECK(wins[0].nanos[1] == 50 && wins[1].nanos[1] == 100 && wins[2].nanos[1] == 100 &&
	      wins[3].nanos[1] == 20);
	CHECK(wins[0].nanos[1] + wins[1].nanos[1] + wins[2].nanos[1] + wins[3].nanos[1] ==
	      1320 - 1050);
	CHECK(wins[0].count[1] == 1 && wins[1].count[1] == 0 && wins[2].count[1] == 0 &&
	      wins[3].count[1] == 0);
	CHECK(wins[1].nanos[2] == 10 && wins[1].count[2] == 1);
	/* The forwarded pieces are cut as counted: each window's come before its start. */
	CHECK(wins[0].forwarded == 50 && wins[1].forwarded == 110 && wins[2].forwarded == 100 &&
	      wins[3].forwarded == 20);
	CHECK(wins[0].intervals_stat == 1 && wins[1].intervals_stat == 1 &&
	      wins[2].intervals_stat == 0);
	fixture_close(&fx);
}

/* A piece whose window was already written is counted, as late, in the open window; a piece
 * that runs past the end of the recording stops there. */
static void
test_late_and_end(void)
{
	struct fixture fx;
	fixture_open(&fx);
	round_at(&fx, 1150);
	piece(&fx, 1080, 1120, 1, 0);
	piece(&fx, 1160, 1500, 2, 0);
	round_at(&fx, 1170);
	finish(&fx, 1230);
	readback(&fx);
	CHECK(nwins == 3);
	CHECK(wins[1].nanos[1] == 40 && wins[1].count[1] == 1 && wins[1].late == 1);
	CHECK(wins[1].nanos[2] == 40 && wins[2].nanos[2] == 30 && wins[2].count[2] == 0);
	fixture_close(&fx);
}

/* A full queue releases its oldest piece early (aggregate counts it as forced). */
static void
test_bound(void)
{
	struct fixture fx;
	fixture_open(&fx);
	for (int i = 0; i < 150; i++)
		piece(&fx, 1000 + (uint64_t)i, 1001 + (uint64_t)i, 3, 0);
	CHECK(fx.off.n == 150 && offcpu_agg_oldest(&fx.off) == 1000);
	while (fx.off.n > fx.off.max)
		CHECK(offcpu_agg_release(&fx.off, &fx.w, offcpu_agg_oldest(&fx.off), UINT64_MAX) ==
		      0);
	CHECK(fx.off.n == 100 && offcpu_agg_oldest(&fx.off) == 1050);
	finish(&fx, 1200);
	readback(&fx);
	CHECK(nwins == 2 && wins[0].nanos[3] == 100 && wins[1].nanos[3] == 50);
	fixture_close(&fx);
}

/* A frame of many intervals of one thread (as collect groups a drain): each is cut and
 * counted as a frame of its own would be, and the counted pieces go on grouped, a frame per
 * window rather than one per piece. */
static void
test_grouped(void)
{
	struct fixture fx;
	fixture_open(&fx);
	grouped_frame();
	CHECK(offcpu_agg_push(&fx.off, &os, NULL, NULL) == 0);
	CHECK(fx.off.n == 11 && fx.off.st.pieces == 11);
	round_at(&fx, 1250);
	finish(&fx, 1300);
	readback(&fx);
	CHECK(nwins == 3);
	CHECK(wins[0].count[1] == 5 && wins[0].nanos[1] == 75);
	CHECK(wins[1].count[1] == 6 && wins[1].nanos[1] == 80);
	CHECK(wins[2].count[1] == 0 && wins[2].nanos[1] == 10);
	CHECK(wins[0].forwarded == 75 && wins[1].forwarded == 80 && wins[2].forwarded == 10);
	CHECK(wins[0].fwd_frames == 1 && wins[0].fwd_pieces == 5 && wins[0].fwd_flags == 0);
	CHECK(wins[1].fwd_frames == 1 && wins[1].fwd_pieces == 6 &&
	      wins[1].fwd_flags == OFFCPU_CONTINUES);
	CHECK(wins[2].fwd_frames == 1 && wins[2].fwd_pieces == 1 &&
	      wins[2].fwd_flags == OFFCPU_CONTINUED);
	fixture_close(&fx);
}

/* --offcpu-probability 30: the window's stacks and totals are the recorded values weighed
 * 100/30, each stack's rounded once and the totals their sums; the recorded count stays. */
static void
test_weighed(void)
{
	struct fixture fx;
	fixture_open(&fx);
	fx.off.percent = 30;
	piece(&fx, 1010, 1020, 1, 0);
	piece(&fx, 1030, 1037, 1, 0);
	piece(&fx, 1040, 1041, 2, 0);
	finish(&fx, 1100);
	readback(&fx);
	CHECK(nwins == 1);
	/* thread 1: 2 intervals, 17 ns -> 6.67 -> 7 and 56.67 -> 57; thread 2: 1, 1 ns -> 3. */
	CHECK(wins[0].count[1] == 7 && wins[0].nanos[1] == 57);
	CHECK(wins[0].count[2] == 3 && wins[0].nanos[2] == 3);
	CHECK(wins[0].intervals_stat == 10 && wins[0].nanos_stat == 60);
	CHECK(wins[0].recorded_stat == 3 && wins[0].percent_stat == 30);
	/* The forwarded pieces keep their real lengths. */
	CHECK(wins[0].forwarded == 18);
	fixture_close(&fx);
}

/* An interval that runs past WINDOWS_MAX_GAP windows is refused as a corrupt time, as an
 * event that far ahead is: it would close the windows one by one (found by
 * fuzz/stage_aggregate, a piece of 9e15 ns in 1 ms windows). */
static void
test_endless(void)
{
	struct fixture fx;
	fixture_open(&fx);
	piece(&fx, 1010, 1000 + (uint64_t)W * (WINDOWS_MAX_GAP + 1), 1, 0);
	CHECK(offcpu_agg_release(&fx.off, &fx.w, UINT64_MAX, UINT64_MAX) < 0);
	CHECK(fx.w.err && strstr(fx.w.err, "off-CPU interval"));
	fixture_close(&fx);
	/* One just inside the bound is cut into its windows. */
	fixture_open(&fx);
	piece(&fx, 1010, 1000 + (uint64_t)W * 8, 1, 0);
	finish(&fx, 1000 + (uint64_t)W * 8);
	readback(&fx);
	CHECK(nwins == 8 && wins[0].nanos[1] == 90 && wins[7].nanos[1] == W);
	fixture_close(&fx);
}

/* --max-pending-events bounds the queue while a frame's pieces go in: a full queue releases
 * its oldest pieces first (as aggregate's forced release does), and nothing is lost. */
static int
release_oldest(void *arg)
{
	struct fixture *fx = arg;
	fx->off.st.forced++;
	return offcpu_agg_release(&fx->off, &fx->w, offcpu_agg_oldest(&fx->off), UINT64_MAX);
}

static void
test_pending_bound(void)
{
	struct fixture fx;
	fixture_open(&fx);
	fx.off.max = 4;
	grouped_frame();
	CHECK(offcpu_agg_push(&fx.off, &os, release_oldest, &fx) == 0);
	CHECK(fx.off.peak == 4 && fx.off.n <= 4 && fx.off.st.forced > 0);
	finish(&fx, 1300);
	readback(&fx);
	CHECK(nwins == 3);
	CHECK(wins[0].nanos[1] + wins[1].nanos[1] + wins[2].nanos[1] == 165);
	CHECK(wins[0].count[1] + wins[1].count[1] + wins[2].count[1] == 11);
	fixture_close(&fx);
}

int
main(void)
{
	test_split();
	test_grouped();
	test_weighed();
	test_late_and_end();
	test_bound();
	test_endless();
	test_pending_bound();
	printf("offcpu_agg: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
