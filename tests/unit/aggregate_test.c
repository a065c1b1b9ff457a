/* aggregate: the reorder buffer releases shuffled events in time order; windows are cut at
 * exact boundaries, publish the empty windows between events, end without a zero-length
 * window on a boundary, count what the --max-stacks cap drops and refuse absurd time jumps.
 * Every window is read back from the stream it was written to. */
#include "../../aggregate/reorder.h"
#include "../../aggregate/stacktab.h"
#include "../../aggregate/window.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stream.h"

#include "check.h"

#define W 100 /* window width in the tests */

struct fixture {
	char path[64];
	int fd;
	struct stream_writer out;
	struct windows w;
};

/* One window as read back: its frames must come as START, STACK..., [WARNING], END. */
#define MAXWIN 16
#define MAXSTK 8
struct win {
	struct fr_window_start start;
	struct fr_window_stack stacks[MAXSTK];
	int nstacks, warnings, ended, bad_order;
	uint32_t end_index, reason;
	uint64_t end_start, end_end;
	char keys[STREAM_MAX_STATS][48];
	uint64_t values[STREAM_MAX_STATS];
	int nstats;
};
static struct win wins[MAXWIN];
static int nwins;

static void
fixture_open(struct fixture *fx, uint64_t max_stacks)
{
	static const struct stream_header h = { 1, 1, 0, 42, 62 };

	snprintf(fx->path, sizeof(fx->path), "/tmp/aggregate_test.XXXXXX");
	fx->fd = mkstemp(fx->path);
	if (fx->fd < 0 || stream_writer_open(&fx->out, fx->fd, "t", &h) < 0 ||
	    windows_init(&fx->w, &fx->out, &(struct window_opts){ W, max_stacks, 0, 0 }) < 0)
		abort();
}

static void
fixture_close(struct fixture *fx)
{
	windows_release(&fx->w);
	stream_writer_release(&fx->out);
	close(fx->fd);
	unlink(fx->path);
}

static void
on_end(struct win *x, const struct fr_window_end *e)
{
	x->ended = 1;
	x->end_index = e->index;
	x->end_start = e->start;
	x->end_end = e->end;
	x->reason = e->reason;
	x->nstats = e->nstats;
	for (int i = 0; i < e->nstats; i++) {
		snprintf(x->keys[i], sizeof(x->keys[i]), "%.*s", e->stats[i].key.len,
			 e->stats[i].key.p);
		x->values[i] = e->stats[i].value;
	}
}

static void
record(const struct frame *f)
{
	static struct fr_window_end e;
	struct win *x = nwins ? &wins[nwins - 1] : NULL;
	char err[200];

	if (f->type == FR_WINDOW_START) {
		if (nwins == MAXWIN || (x && !x->ended))
			abort();
		x = &wins[nwins++];
		memset(x, 0, sizeof(*x));
		CHECK(stream_get_window_start(f, &x->start, err, sizeof(err)) == 0);
	} else if (f->type == FR_WINDOW_STACK) {
		if (!x || x->ended || x->nstacks == MAXSTK)
			abort();
		CHECK(stream_get_window_stack(f, &x->stacks[x->nstacks++], err, sizeof(err)) == 0);
	} else if (f->type == FR_WARNING) {
		if (x && !x->ended)
			x->warnings++;
	} else if (f->type == FR_WINDOW_END) {
		if (!x || x->ended)
			abort();
		CHECK(stream_get_window_end(f, &e, err, sizeof(err)) == 0);
		on_end(x, &e);
	}
}

/* Flushes and rereads every window written so far into wins[]. */
static void
readback(struct fixture *fx)
{
	struct stream_reader rd;
	struct stream_header h;
	struct frame f;
	int rc;

	nwins = 0;
	CHECK(stream_flush(&fx->out) == 0);
	int fd = open(fx->path, O_RDONLY);
	CHECK(fd >= 0 && stream_reader_open(&rd, fd, "t", &h) == 0);
	while ((rc = stream_read(&rd, &f)) > 0)
		record(&f);
	CHECK(rc == 0);
	CHECK(nwins == 0 || wins[nwins - 1].ended);
	stream_reader_release(&rd);
	close(fd);
}

static uint64_t
stat_of(const struct win *x, const char *key)
{
	for (int i = 0; i < x->nstats; i++)
		if (strcmp(x->keys[i], key) == 0)
			return x->values[i];
	return UINT64_MAX;
}

/* Window i spans [start, end), its start and end frames agree, and it holds n stacks. */
static int
is_window(int i, uint64_t start, uint64_t end, uint32_t reason, int n)
{
	const struct win *x = &wins[i];
	return i < nwins && x->start.index == (uint32_t)i && x->end_index == (uint32_t)i &&
	       x->start.start == start && x->start.end == end && x->end_start == start &&
	       x->end_end == end && x->reason == reason && x->nstacks == n;
}

static int
add(struct fixture *fx, uint64_t time, uint32_t tid, uint32_t leaf, uint32_t flags)
{
	uint32_t locs[2] = { leaf, 1 };
	struct stack_event ev = { .time = time, .period = 7, .pid = 10, .tid = tid,
				  .flags = flags, .nlocs = 2, .locs = locs };

	return windows_add(&fx->w, &ev);
}

/* An event at time with a payload of n bytes and no locations, through the buffer. */
static int
push(struct reorder *r, uint64_t time, const void *payload, uint32_t n, struct pending **ev)
{
	return reorder_push(r, &(struct stack_event){ .time = time }, payload, n, ev);
}

/* The windows keep the options they were set up with; the recording's own window length
 * cuts a longer reorder window to it, and reports the one in effect. */
static void
test_setup(void)
{
	struct stream_writer out = { 0 };
	struct windows w;

	CHECK(windows_init(&w, &out, &(struct window_opts){ 1000, 8, 500, 7 }) == 0);
	CHECK(w.width == 1000 && w.tab.max == 8 && w.reorder_ns == 500 && w.max_pending == 7);
	CHECK(windows_set_width(&w, 2000) == 500 && w.width == 2000);
	CHECK(windows_set_width(&w, 200) == 200 && w.width == 200 && w.reorder_ns == 200);
	windows_release(&w);
}

static void
test_reorder(void)
{
	struct reorder r;
	enum { N = 500 };
	uint64_t x = 12345;

	struct pending *ev = NULL;

	CHECK(reorder_init(&r, N) == 0);
	/* A shuffled permutation of the times 0, 10, ..., with the index as payload;
	 * more events than the initial capacity, so the heap grows. */
	uint32_t idx[N];
	for (uint32_t i = 0; i < N; i++)
		idx[i] = i;
	for (uint32_t i = N - 1; i > 0; i--) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		uint32_t j = (uint32_t)((x >> 33) % (i + 1)), t = idx[i];
		idx[i] = idx[j];
		idx[j] = t;
	}
	for (uint32_t i = 0; i < N; i++)
		CHECK(push(&r, idx[i] * 10ull, &idx[i], 4, &ev) == 0 && ev == NULL);
	CHECK(r.n == N && r.peak == N && reorder_peek(&r)->ev.time == 0);
	int in_order = 1;
	for (uint32_t i = 0; i < N; i++) {
		struct pending *p = reorder_pop(&r);
		uint32_t v;
		memcpy(&v, pending_payload(p), 4);
		in_order &= p->ev.time == i * 10ull && p->len == 4 && v == i;
		reorder_free(&r, p);
	}
	CHECK(in_order);
	CHECK(reorder_peek(&r) == NULL && reorder_pop(&r) == NULL);
	/* An event comes back as it went in: decoded, its locations copied, beside the frame's
	 * payload. */
	uint32_t locs[3] = { 7, 8, 9 };
	struct stack_event in = { .time = 3, .period = 11, .pid = 1, .tid = 2,
				  .flags = STACK_USABLE, .nlocs = 3, .locs = locs };
	CHECK(reorder_push(&r, &in, (const uint8_t *)"frame", 5, &ev) == 0 && ev == NULL);
	locs[2] = 0;
	struct pending *p = reorder_pop(&r);
	CHECK(p && p->ev.time == 3 && p->ev.period == 11 && p->ev.tid == 2 &&
	      p->ev.flags == STACK_USABLE && p->ev.nlocs == 3 && p->ev.locs[2] == 9);
	CHECK(p && p->len == 5 && memcmp(pending_payload(p), "frame", 5) == 0);
	reorder_free(&r, p);
	/* Pending events are freed by the release. */
	CHECK(push(&r, 5, "ab", 2, &ev) == 0 && ev == NULL);
	reorder_release(&r);
}

/* The time and the one-byte payload of an evicted event, freed. */
static int
evicted_is(struct reorder *r, struct pending *p, uint64_t time, uint8_t tag)
{
	int ok = p && p->ev.time == time && p->len == 1 && pending_payload(p)[0] == tag;
	reorder_free(r, p);
	return ok;
}

/* A full buffer hands back the oldest of its events and the new one: it never holds more
 * than --max-pending-events, so the peak it reports is bounded by it. */
static void
test_reorder_bound(void)
{
	struct reorder r;
	struct pending *ev = NULL;
	uint8_t tag[] = { 'a', 'b', 'c', 'd', 'e', 'f', 'g' };

	CHECK(reorder_init(&r, 4) == 0);
	CHECK(push(&r, 10, &tag[0], 1, &ev) == 0 && ev == NULL);
	CHECK(push(&r, 30, &tag[1], 1, &ev) == 0 && ev == NULL);
	CHECK(push(&r, 20, &tag[2], 1, &ev) == 0 && ev == NULL); /* out of order */
	CHECK(push(&r, 40, &tag[3], 1, &ev) == 0 && ev == NULL);
	CHECK(r.n == 4 && r.peak == 4);
	/* Full: a newer event pushes the oldest out. */
	CHECK(push(&r, 50, &tag[4], 1, &ev) == 0 && evicted_is(&r, ev, 10, 'a'));
	CHECK(r.n == 4 && r.peak == 4);
	/* An event older than every held one leaves itself. */
	CHECK(push(&r, 5, &tag[5], 1, &ev) == 0 && evicted_is(&r, ev, 5, 'f'));
	CHECK(r.n == 4 && r.peak == 4);
	/* A tie goes to the event that came first: the held one. */
	CHECK(push(&r, 20, &tag[6], 1, &ev) == 0 && evicted_is(&r, ev, 20, 'c'));
	CHECK(r.n == 4 && r.peak == 4);
	uint64_t want[] = { 20, 30, 40, 50 };
	uint8_t wtag[] = { 'g', 'b', 'd', 'e' };
	int in_order = 1;
	for (int i = 0; i < 4; i++) {
		struct pending *p = reorder_pop(&r);
		in_order &= p && p->ev.time == want[i] && pending_payload(p)[0] == wtag[i];
		reorder_free(&r, p);
	}
	CHECK(in_order && r.n == 0 && r.peak == 4);
	reorder_release(&r);
}

/* Shuffled events through the buffer land in their windows with none counted late. */
static void
test_shuffled_windows(void)
{
	struct fixture fx;
	struct reorder r;
	struct pending *ev = NULL;
	enum { N = 50 };
	uint32_t order[N];

	for (uint32_t i = 0; i < N; i++)
		order[i] = (i * 17) % N; /* 17 is prime to 50: a permutation */
	fixture_open(&fx, 100);
	CHECK(reorder_init(&r, N) == 0);
	for (uint32_t i = 0; i < N; i++)
		CHECK(push(&r, 1000 + order[i] * 10ull, &order[i], 4, &ev) == 0 && ev == NULL);
	for (struct pending *p; (p = reorder_pop(&r)); reorder_free(&r, p))
		CHECK(add(&fx, p->ev.time, 1, 2 + pending_payload(p)[0] % 3, STACK_USABLE) == 0);
	CHECK(windows_finish(&fx.w, 1500) == 0);
	readback(&fx);
	CHECK(nwins == 5);
	for (int i = 0; i < nwins; i++) {
		CHECK(is_window(i, 1000 + i * 100ull, 1100 + i * 100ull,
				i == 4 ? WINDOW_FINAL : WINDOW_COMPLETE, 3));
		CHECK(stat_of(&wins[i], "samples") == 10);
		CHECK(stat_of(&wins[i], "event_order.late_events") == 0);
	}
	reorder_release(&r);
	fixture_close(&fx);
}

static void
test_boundaries(void)
{
	struct fixture fx;

	fixture_open(&fx, 100);
	CHECK(windows_advance(&fx.w, 5000) == 0); /* no origin yet: nothing to close */
	CHECK(add(&fx, 1000, 1, 2, STACK_USABLE) == 0);
	CHECK(add(&fx, 1099, 1, 2, STACK_USABLE) == 0);
	CHECK(add(&fx, 1099, 1, 3, STACK_TRUNCATED | STACK_CYCLE) == 0);
	readback(&fx);
	CHECK(nwins == 0);
	CHECK(add(&fx, 1100, 1, 2, STACK_USABLE) == 0);    /* exactly the next window */
	readback(&fx);
	CHECK(nwins == 1 && is_window(0, 1000, 1100, WINDOW_COMPLETE, 2));
	CHECK(stat_of(&wins[0], "samples") == 3 && stat_of(&wins[0], "cpu_nanoseconds") == 21);
	CHECK(stat_of(&wins[0], "usable_stacks") == 2 && stat_of(&wins[0], "unusable_stacks") == 1);
	CHECK(stat_of(&wins[0], "truncated_stacks") == 1 && stat_of(&wins[0], "cyclic_stacks") == 1);
	CHECK(stat_of(&wins[0], "distinct_stacks") == 2);
	const struct fr_window_stack *s = &wins[0].stacks[0];
	if (s->locs[0] != 2)
		s = &wins[0].stacks[1];
	CHECK(s->locs[0] == 2 && s->count == 2 && s->nanos == 14 && s->nlocs == 2);
	CHECK(s->pid == 10 && s->tid == 1 && s->locs[1] == 1 && s->index == 0);

	/* An event three windows on publishes the two empty windows in between. */
	CHECK(add(&fx, 1350, 2, 4, STACK_EMPTY) == 0);
	CHECK(add(&fx, 1250, 2, 4, STACK_OUT_OF_MAPPING) == 0); /* late */
	/* Ending on a boundary makes the last window, whole, the final one, with no empty
	 * one after it. */
	CHECK(windows_finish(&fx.w, 1400) == 0);
	readback(&fx);
	CHECK(nwins == 4);
	CHECK(is_window(1, 1100, 1200, WINDOW_COMPLETE, 1));
	CHECK(is_window(2, 1200, 1300, WINDOW_COMPLETE, 0));
	CHECK(stat_of(&wins[2], "samples") == 0 && stat_of(&wins[2], "distinct_stacks") == 0);
	CHECK(is_window(3, 1300, 1400, WINDOW_FINAL, 1));
	CHECK(stat_of(&wins[3], "samples") == 2 && stat_of(&wins[3], "event_order.late_events") == 1);
	CHECK(stat_of(&wins[3], "empty_stacks") == 1);
	CHECK(stat_of(&wins[3], "out_of_mapping_stacks") == 1);
	CHECK(wins[3].stacks[0].count == 2 && wins[3].stacks[0].index == 3);
	fixture_close(&fx);
}

static void
test_finish(void)
{
	struct fixture fx;

	/* Ending inside a window publishes it, cut at the end, even when it is empty. */
	fixture_open(&fx, 100);
	CHECK(add(&fx, 1000, 1, 2, STACK_USABLE) == 0);
	CHECK(windows_finish(&fx.w, 1130) == 0);
	readback(&fx);
	CHECK(nwins == 2 && is_window(0, 1000, 1100, WINDOW_COMPLETE, 1));
	CHECK(is_window(1, 1100, 1130, WINDOW_FINAL, 0));
	fixture_close(&fx);

	/* A recording without samples still publishes one window. */
	fixture_open(&fx, 100);
	windows_origin(&fx.w, 500);
	CHECK(windows_finish(&fx.w, 500) == 0);
	readback(&fx);
	CHECK(nwins == 1 && is_window(0, 500, 500, WINDOW_FINAL, 0));
	fixture_close(&fx);

	/* Lost samples after the last boundary are not silently dropped. */
	fixture_open(&fx, 100);
	CHECK(add(&fx, 1000, 1, 2, STACK_USABLE) == 0);
	CHECK(windows_advance(&fx.w, 1100) == 0);
	fx.w.st.lost = 3;
	CHECK(windows_finish(&fx.w, 1100) == 0);
	readback(&fx);
	CHECK(nwins == 2 && is_window(1, 1100, 1100, WINDOW_FINAL, 0));
	CHECK(nwins == 2 && stat_of(&wins[1], "lost_samples") == 3);
	fixture_close(&fx);
}

/* unwind's debuginfod counts: none before a frame brought them, then the latest in every
 * window written after it. */
static void
test_debuginfod(void)
{
	struct fixture fx;
	struct fr_debuginfod d = { 3, 2, 1, 1, 0, 1, 0, 4096 };

	fixture_open(&fx, 100);
	CHECK(add(&fx, 1000, 1, 2, STACK_USABLE) == 0);
	CHECK(windows_advance(&fx.w, 1100) == 0);
	windows_debuginfod(&fx.w, &d);
	CHECK(add(&fx, 1150, 1, 2, STACK_USABLE) == 0);
	CHECK(windows_advance(&fx.w, 1200) == 0);
	d.queried = 4, d.failed = 1;
	windows_debuginfod(&fx.w, &d);
	CHECK(windows_finish(&fx.w, 1250) == 0);
	readback(&fx);
	CHECK(nwins == 3 && stat_of(&wins[0], "debuginfod.queried") == UINT64_MAX);
	CHECK(nwins == 3 && stat_of(&wins[1], "debuginfod.queried") == 3);
	CHECK(nwins == 3 && stat_of(&wins[1], "debuginfod.bytes_fetched") == 4096);
	CHECK(nwins == 3 && stat_of(&wins[1], "debuginfod.out_of_time") == 1);
	CHECK(nwins == 3 && stat_of(&wins[1], "debuginfod.failed") == 0);
	CHECK(nwins == 3 && stat_of(&wins[2], "debuginfod.queried") == 4);
	CHECK(nwins == 3 && stat_of(&wins[2], "debuginfod.failed") == 1);
	fixture_close(&fx);
}

/* How many windows read back are final. */
static int
finals(void)
{
	int n = 0;
	for (int i = 0; i < nwins; i++)
		n += wins[i].reason == WINDOW_FINAL;
	return n;
}

/* The last window of every run is the final one and no other is, however the end falls:
 * on a boundary (--duration 4s --window 2s), inside a window, on a boundary that rounds
 * reached first, or on an exec's cut. */
static void
test_final_window(void)
{
	struct fixture fx;

	/* --duration 4s --window 2s: two whole windows, the second final. */
	fixture_open(&fx, 100);
	windows_origin(&fx.w, 1000);
	CHECK(add(&fx, 1050, 1, 2, STACK_USABLE) == 0);
	CHECK(add(&fx, 1150, 1, 2, STACK_USABLE) == 0);
	CHECK(windows_close_before(&fx.w, 1199) == 0); /* rounds before the deadline */
	CHECK(windows_finish(&fx.w, 1200) == 0);
	readback(&fx);
	CHECK(nwins == 2 && is_window(0, 1000, 1100, WINDOW_COMPLETE, 1));
	CHECK(is_window(1, 1100, 1200, WINDOW_FINAL, 1) && finals() == 1);
	fixture_close(&fx);

	/* A round at exactly a boundary leaves that window open: the end may come there. */
	fixture_open(&fx, 100);
	windows_origin(&fx.w, 1000);
	CHECK(add(&fx, 1050, 1, 2, STACK_USABLE) == 0);
	CHECK(windows_close_before(&fx.w, 1100) == 0);
	readback(&fx);
	CHECK(nwins == 0);
	CHECK(windows_finish(&fx.w, 1100) == 0);
	readback(&fx);
	CHECK(nwins == 1 && is_window(0, 1000, 1100, WINDOW_FINAL, 1));
	fixture_close(&fx);

	/* A later round closes it as complete, and the end inside the next is final. */
	fixture_open(&fx, 100);
	windows_origin(&fx.w, 1000);
	CHECK(windows_close_before(&fx.w, 1101) == 0);
	readback(&fx);
	CHECK(nwins == 1 && is_window(0, 1000, 1100, WINDOW_COMPLETE, 0));
	CHECK(windows_finish(&fx.w, 1170) == 0);
	readback(&fx);
	CHECK(nwins == 2 && is_window(1, 1100, 1170, WINDOW_FINAL, 0) && finals() == 1);
	fixture_close(&fx);

	/* The end exactly at an exec's cut: the window the exec ends is the final one. */
	fixture_open(&fx, 100);
	windows_origin(&fx.w, 1000);
	CHECK(add(&fx, 1010, 1, 2, STACK_USABLE) == 0);
	windows_exec(&fx.w, 1040);
	CHECK(windows_finish(&fx.w, 1040) == 0);
	readback(&fx);
	CHECK(nwins == 1 && is_window(0, 1000, 1040, WINDOW_FINAL, 1));
	fixture_close(&fx);

	/* An end many windows on: the empty windows between are complete, the last final. */
	fixture_open(&fx, 100);
	windows_origin(&fx.w, 1000);
	CHECK(windows_finish(&fx.w, 1300) == 0);
	readback(&fx);
	CHECK(nwins == 3 && is_window(2, 1200, 1300, WINDOW_FINAL, 0) && finals() == 1);
	fixture_close(&fx);
}

static void
test_cap(void)
{
	struct fixture fx;

	fixture_open(&fx, 2);
	CHECK(add(&fx, 1000, 1, 100, STACK_USABLE) == 0);
	CHECK(add(&fx, 1001, 1, 200, STACK_USABLE) == 0);
	CHECK(add(&fx, 1002, 1, 300, STACK_USABLE) == 0);  /* a third stack: dropped */
	CHECK(add(&fx, 1003, 1, 100, STACK_USABLE) == 0);  /* known stacks keep counting */
	CHECK(add(&fx, 1004, 2, 100, STACK_USABLE) == 0);  /* another thread: a new stack */
	CHECK(add(&fx, 1005, 1, 200, STACK_USABLE) == 0);
	CHECK(add(&fx, 1100, 1, 300, STACK_USABLE) == 0);  /* next window: room again */
	CHECK(windows_finish(&fx.w, 1150) == 0);
	readback(&fx);
	CHECK(nwins == 2 && is_window(0, 1000, 1100, WINDOW_COMPLETE, 2));
	const struct win *x = &wins[0];
	CHECK(stat_of(x, "samples") == 6 && stat_of(x, "cpu_nanoseconds") == 28);
	CHECK(stat_of(x, "aggregation_dropped_samples") == 2);
	CHECK(stat_of(x, "aggregation_dropped_nanoseconds") == 14);
	CHECK(stat_of(x, "distinct_stacks") == 2 && stat_of(x, "max_stacks") == 2);
	CHECK(x->stacks[0].count == 2 && x->stacks[1].count == 2);
	CHECK(x->stacks[0].nanos == 14 && x->stacks[1].nanos == 14);
	CHECK(x->warnings == 1);
	CHECK(is_window(1, 1100, 1150, WINDOW_FINAL, 1) && wins[1].stacks[0].locs[0] == 300);
	CHECK(stat_of(&wins[1], "aggregation_dropped_samples") == 0 && wins[1].warnings == 0);
	fixture_close(&fx);

	/* The table on its own: full means refused, known keys still accumulate. */
	struct stacktab t;
	uint32_t a[] = { 1, 2, 3 }, b[] = { 1, 2, 4 };
	CHECK(stacktab_init(&t, 1) == 0);
	CHECK(stacktab_add(&t, 1, 1, a, 3, 1, 5) == 1);
	CHECK(stacktab_add(&t, 1, 1, b, 3, 1, 5) == 0);
	CHECK(stacktab_add(&t, 1, 1, a, 2, 1, 5) == 0); /* a prefix is another stack */
	CHECK(stacktab_add(&t, 1, 1, a, 3, 2, 6) == 1 && t.n == 1);
	stacktab_clear(&t);
	CHECK(t.n == 0 && stacktab_add(&t, 1, 1, b, 3, 1, 5) == 1);
	stacktab_release(&t);
}

/* Many distinct stacks: the table grows past its first size and loses none. */
static void
test_growth(void)
{
	struct stacktab t;
	enum { N = 5000 };
	uint32_t locs[2];
	int ok = 1;

	CHECK(stacktab_init(&t, N) == 0);
	for (uint32_t i = 0; i < N; i++) {
		locs[0] = i;
		locs[1] = i * 7;
		ok &= stacktab_add(&t, 3, 4, locs, 2, 1, 1) == 1;
		ok &= stacktab_add(&t, 3, 4, locs, 2, 1, 1) == 1;
	}
	CHECK(ok && t.n == N);
	uint64_t total = 0;
	for (size_t i = 0; i < t.nslots; i++)
		if (t.slots[i])
			total += t.slots[i]->count;
	CHECK(total == 2 * N);
	locs[0] = N;
	CHECK(stacktab_add(&t, 3, 4, locs, 2, 1, 1) == 0);
	stacktab_release(&t);
}

static void
test_jump(void)
{
	struct fixture fx;

	fixture_open(&fx, 100);
	CHECK(add(&fx, 1000, 1, 2, STACK_USABLE) == 0);
	CHECK(add(&fx, 1000 + (uint64_t)W * (WINDOWS_MAX_GAP + 5), 1, 2, STACK_USABLE) == -1);
	CHECK(fx.w.err != NULL);
	readback(&fx);
	CHECK(nwins == 0); /* refused before publishing a single empty window */
	fx.w.err = NULL;
	CHECK(windows_finish(&fx.w, UINT64_MAX) == -1 && fx.w.err != NULL);
	fixture_close(&fx);
}

/* The frame types written so far, in order, as letters: S window start, K window stack,
 * E window end, T target. */
static void
sequence(struct fixture *fx, char *out, size_t n)
{
	struct stream_reader rd;
	struct stream_header h;
	struct frame f;
	size_t k = 0;

	CHECK(stream_flush(&fx->out) == 0);
	int fd = open(fx->path, O_RDONLY);
	CHECK(fd >= 0 && stream_reader_open(&rd, fd, "t", &h) == 0);
	while (k + 1 < n && stream_read(&rd, &f) > 0)
		if (f.type == FR_WINDOW_START || f.type == FR_WINDOW_STACK ||
		    f.type == FR_WINDOW_END || f.type == FR_TARGET)
			out[k++] = f.type == FR_WINDOW_START ? 'S' : f.type == FR_WINDOW_STACK ?
				   'K' : f.type == FR_WINDOW_END ? 'E' : 'T';
	out[k] = 0;
	stream_reader_release(&rd);
	close(fd);
}

/* A target frame of the unwind fallback (since = the end of the failed window) waits until
 * every window that starts before since is written. */
static void
test_hold_until(void)
{
	struct fixture fx;
	struct frame t = { FR_TARGET, 3, (const uint8_t *)"abc" };
	char seq[32];

	fixture_open(&fx, 100);
	CHECK(add(&fx, 1000, 1, 2, STACK_USABLE) == 0);
	CHECK(windows_hold_until(&fx.w, &t, 1100) == 0);
	CHECK(add(&fx, 1050, 1, 2, STACK_USABLE) == 0);
	sequence(&fx, seq, sizeof(seq));
	CHECK(strcmp(seq, "") == 0);
	CHECK(windows_advance(&fx.w, 1100) == 0);
	sequence(&fx, seq, sizeof(seq));
	CHECK(strcmp(seq, "SKET") == 0);
	fixture_close(&fx);

	/* since two windows ahead: the first window's end does not release it. */
	fixture_open(&fx, 100);
	CHECK(add(&fx, 1000, 1, 2, STACK_USABLE) == 0);
	CHECK(windows_hold_until(&fx.w, &t, 1200) == 0);
	CHECK(windows_advance(&fx.w, 1100) == 0);
	sequence(&fx, seq, sizeof(seq));
	CHECK(strcmp(seq, "SKE") == 0);
	CHECK(windows_finish(&fx.w, 1150) == 0);
	sequence(&fx, seq, sizeof(seq));
	CHECK(strcmp(seq, "SKESET") == 0);
	fixture_close(&fx);
}

int
main(void)
{
	test_reorder();
	test_setup();
	test_reorder_bound();
	test_shuffled_windows();
	test_boundaries();
	test_finish();
	test_final_window();
	test_cap();
	test_growth();
	test_jump();
	test_hold_until();
	test_debuginfod();
	printf("aggregate: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
