/*
 * aggregate: cuts the stream of resolved stacks into time windows.
 *
 * Reads the framed stream on stdin (FR_STACK from unwind), writes it on stdout with every
 * frame forwarded in arrival order except FR_STACK, which is held in a bounded reorder buffer
 * and forwarded in time order as it is released.  Each released stack is counted into the
 * window holding its time; closed windows go out as FR_WINDOW_START / FR_WINDOW_STACK /
 * FR_WINDOW_END.  An event is released when an FR_ROUND says nothing older can follow, when
 * it is older than the newest event by more than --event-reorder-window, or when the buffer
 * holds --max-pending-events.  FR_END releases everything and closes the final window.
 * An FR_COMM flagged COMM_EXEC for the target, or its FR_TARGET_EXIT (a container target may
 * start again), ends the window holding its time there; an
 * FR_TARGET that follows such an exec is held back until that window's end is written, and
 * one with a `since` time (the unwind fallback) until the windows that start before it are.
 * FR_OFFCPU_STACK pieces wait in their own bounded queue and are cut at window ends
 * (offcpu.h); their windows' off-CPU stacks go out as FR_WINDOW_OFFCPU_STACK.
 * Heap frames (heap.h) and page frames (physical.h) wait in the reorder buffer with the
 * stacks; their windows go out as FR_WINDOW_HEAP_STACK and FR_WINDOW_PAGE_STACK.  A page loss
 * while physical-usage is asked stops the stage before the window open is written.
 * Windows are as long as the first FR_TARGET says the recording was made with (collect's
 * --window; lib/defaults.h's default when it does not say, as from import); --window
 * overrides that for a replay.
 * Confined (lib/confine.h, docs/privileges.md) to its stdin and stdout: no file at all.
 * unwind's FR_FORGET frames, and the names of the threads and processes that ended, go out
 * once the windows that may still show them are written (forget.h).
 */
#include <err.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "confine.h"
#include "defaults.h"
#include "forget.h"
#include "frametab.h"
#include "parse.h"
#include "pins.h"
#include "reorder.h"
#include "runas.h"
#include "stream.h"
#include "window.h"

static struct {
	uint64_t window_ns, reorder_ns, max_pending, max_stacks;
	int window_given; /* --window given: it wins over the recorded window length */
	int windows_only; /* --windows-only: the events the windows count do not go on */
} env = {
	.max_pending = RP_DEFAULT_MAX_PENDING_EVENTS,
	.max_stacks = RP_DEFAULT_MAX_STACKS,
};

static void
usage(FILE *f, int status)
{
	fprintf(f,
		"usage: aggregate [--window DURATION] [--max-stacks N] [--max-pending-events N]\n"
		"                 [--event-reorder-window DURATION] [--windows-only] [--check]\n"
		"                 < stream > stream\n"
		"\n"
		"Cuts resolved stacks into time windows (see docs/stream-format.md).\n"
		"  --window DURATION               window length, > 0, overriding for a replay the\n"
		"                                  one the stream was recorded with (collect's\n"
		"                                  --window, in its target frame; default "
		RP_DEFAULT_WINDOW " for\n"
		"                                  a stream without one)\n"
		"  --max-stacks N                  distinct stacks per window (default "
		RP_DEFAULT_TEXT(RP_DEFAULT_MAX_STACKS) ")\n"
		"  --max-pending-events N          reorder buffer bound (default "
		RP_DEFAULT_TEXT(RP_DEFAULT_MAX_PENDING_EVENTS) ")\n"
		"  --event-reorder-window DURATION tolerated timestamp skew, <= window "
		"(default " RP_DEFAULT_EVENT_REORDER_WINDOW ")\n"
		"  --windows-only                  write the windows, not the stacks, off-CPU pieces\n"
		"                                  and heap and page events they count (for a chain\n"
		"                                  without emit-firefox or emit-otlp --timeline)\n"
		"  --check                         validate the options and exit\n"
		"  --run-as UID:GID                first argument, as root: become that user\n");
	exit(status);
}

static void
parse_options(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "window", required_argument, NULL, 'w' },
		{ "max-stacks", required_argument, NULL, 's' },
		{ "max-pending-events", required_argument, NULL, 'p' },
		{ "event-reorder-window", required_argument, NULL, 'r' },
		{ "windows-only", no_argument, NULL, 'o' },
		{ "check", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char e[200];
	int check = 0;
	int c;

	env.window_ns = rp_default_ns(RP_DEFAULT_WINDOW);
	env.reorder_ns = rp_default_ns(RP_DEFAULT_EVENT_REORDER_WINDOW);
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'w':
			if (parse_duration(optarg, &env.window_ns, e, sizeof(e)) < 0)
				errx(1, "--window: %s", e);
			if (env.window_ns == 0)
				errx(1, "--window must be greater than zero");
			env.window_given = 1;
			break;
		case 'r':
			if (parse_duration(optarg, &env.reorder_ns, e, sizeof(e)) < 0)
				errx(1, "--event-reorder-window: %s", e);
			break;
		case 's':
			if (parse_u64(optarg, 1, 1u << 24, &env.max_stacks, e, sizeof(e)) < 0)
				errx(1, "--max-stacks: %s", e);
			break;
		case 'p':
			if (parse_u64(optarg, 1, 1u << 24, &env.max_pending, e, sizeof(e)) < 0)
				errx(1, "--max-pending-events: %s", e);
			break;
		case 'o':
			env.windows_only = 1;
			break;
		case 'c':
			check = 1;
			break;
		case 'h':
			usage(stdout, 0);
			break;
		default:
			usage(stderr, 2);
		}
	}
	if (optind != argc)
		errx(1, "unexpected argument '%s'", argv[optind]);
	if (env.reorder_ns > env.window_ns)
		errx(1, "--event-reorder-window may not exceed --window");
	if (check)
		exit(0);
}

struct agg {
	struct stream_reader in;
	struct stream_writer out;
	struct reorder ro;
	struct windows win;
	struct offcpu_agg off; /* off-CPU pieces: their own queue, the same windows */
	struct heap_agg heap;  /* sampled heap state, from heap frames released in order */
	struct physical_agg phys; /* sampled page state, from page frames the same way */
	struct forget_q forget; /* ended threads and processes, until no window names them */
	struct pins pins;       /* what each location's mapping is, for the memory in use */
	uint64_t newest;    /* newest event time seen */
	uint64_t released;  /* everything at or before this time has been released */
	uint32_t target_pid;
};

/* Stops on a failed write or window: the window's own reason (status 1), else the output's,
 * whose status says whether the reader after this stage went away. */
static void __attribute__((noreturn))
die_output(struct agg *a)
{
	if (a->win.err)
		errx(1, "%s", a->win.err);
	errx(stream_writer_status(&a->out), "%s", a->out.err[0] ? a->out.err : "out of memory");
}

static void
forward(struct agg *a, const struct frame *f)
{
	if (stream_forward(&a->out, f) < 0)
		die_output(a);
}

/* A released heap or page frame: the windows move on to its time, and it counts in the
 * open one. */
static int
heap_one(struct agg *a, const struct frame *f, uint64_t time)
{
	char e[200];
	int page = f->type == FR_PAGE_STACK || f->type == FR_PAGE_FREE;
	if (windows_heap_at(&a->win, time) < 0)
		return -1;
	if ((page ? physical_agg_frame(&a->phys, f, e, sizeof(e)) :
		    heap_agg_frame(&a->heap, f, e, sizeof(e))) < 0)
		errx(1, "%s: %s", a->in.name, e);
	return 0;
}

/* Counts an event into its window and sends its frame on, as it arrived (unless
 * --windows-only: then nothing downstream reads it); -1 when that failed. */
static inline int
release_event(struct agg *a, const struct stack_event *ev, const struct frame *f)
{
	/* A process ended or replaced its image at that time: the windows move on to it, and
	 * its sampled blocks are no longer in use (its frame went on when it came). */
	if (ev->type == FR_EXIT) {
		windows_origin(&a->win, ev->time);
		if (windows_advance(&a->win, ev->time) < 0)
			return -1;
		heap_agg_gone(&a->heap, ev->pid);
		if (ev->time > a->released)
			a->released = ev->time;
		return 0;
	}
	int failed = (ev->type ? heap_one(a, f, ev->time) : windows_add(&a->win, ev)) < 0 ||
		     (!env.windows_only && stream_forward(&a->out, f) < 0);
	if (ev->time > a->released)
		a->released = ev->time;
	return failed ? -1 : 0;
}

/* Releases an event that waited in the reorder buffer. */
static void
release_one(struct agg *a, struct pending *p, int forced)
{
	struct frame f = { p->ev.type ? p->ev.type : FR_STACK, p->len, pending_payload(p) };

	if (forced)
		a->win.st.forced++;
	/* The event is given back whatever happens: nothing else holds it now. */
	int failed = release_event(a, &p->ev, &f) < 0;
	reorder_free(&a->ro, p);
	if (failed)
		die_output(a);
}

/* Releases every pending event at or before t. */
static void
drain_until(struct agg *a, uint64_t t)
{
	const struct pending *p;

	while ((p = reorder_peek(&a->ro)) && p->ev.time <= t)
		release_one(a, reorder_pop(&a->ro), 0);
}

/* Releases every pending event at or before t and closes the windows that ended by then. */
static void
release_until(struct agg *a, uint64_t t)
{
	drain_until(a, t);
	if (a->off.n && offcpu_agg_release(&a->off, &a->win, t, UINT64_MAX) < 0)
		die_output(a);
	if (t > a->released)
		a->released = t;
	/* A window that ends exactly at t waits for a later time: should the recording end
	 * at t, it is the final window, and it must not go out as a complete one first. */
	if (windows_close_before(&a->win, a->released) < 0)
		die_output(a);
}

/* A full off-CPU queue releases up to its oldest piece (release_until exits on errors). */
static int
offcpu_room(void *arg)
{
	struct agg *a = arg;
	a->off.st.forced++;
	release_until(a, offcpu_agg_oldest(&a->off));
	return 0;
}

/* Off-CPU pieces are queued apart from the CPU stacks, at most --max-pending-events. */
static void
on_offcpu(struct agg *a, const struct fr_offcpu_stack *os)
{
	a->win.off = &a->off;
	if (offcpu_agg_push(&a->off, os, offcpu_room, a) < 0)
		errx(1, "out of memory");
}

/* An event waits in the reorder buffer, decoded, with its frame to forward. */
static void
queue(struct agg *a, const struct frame *f, const struct stack_event *ev)
{
	windows_origin(&a->win, ev->time);
	if (ev->time > a->newest)
		a->newest = ev->time;
	/* Without a reorder window (an import, whose events come in time order) an event that
	 * is not older than any released one has nothing to wait for: it goes straight on,
	 * without the copy the buffer would make, and what it passed is released as the
	 * buffer would have released it. */
	if (env.reorder_ns == 0 && a->ro.n == 0 && ev->time >= a->released) {
		if (release_event(a, ev, f) < 0)
			die_output(a);
		release_until(a, a->newest);
		return;
	}
	/* A full buffer gives up ordering for its oldest event rather than memory. */
	struct pending *evicted;
	if (reorder_push(&a->ro, ev, f->data, f->len, &evicted) < 0)
		errx(1, "out of memory");
	if (a->ro.peak > a->win.peak_pending)
		a->win.peak_pending = a->ro.peak;
	if (evicted)
		release_one(a, evicted, 1);
	if (a->newest > env.reorder_ns)
		release_until(a, a->newest - env.reorder_ns);
}

static void
on_stack(struct agg *a, const struct frame *f, const struct fr_stack *s)
{
	struct stack_event ev = { s->time, s->period, s->pid, s->tid, s->flags, s->nlocs, s->locs, 0 };
	queue(a, f, &ev);
}

/* Heap and page frames wait in the reorder buffer with the CPU stacks, in time order: a
 * free must not overtake its allocation, and each counts in the window of its time. */
static void
on_heap(struct agg *a, const struct frame *f, uint64_t time, uint32_t pid, uint32_t tid)
{
	struct stack_event ev = { .time = time, .pid = pid, .tid = tid, .type = f->type };
	if (f->type == FR_PAGE_STACK || f->type == FR_PAGE_FREE)
		a->win.phys = &a->phys;
	else
		a->win.heap = &a->heap;
	queue(a, f, &ev);
}

/* The memory of a process goes with it, and with its image at an exec: its blocks stop
 * being in use then, in time order with its allocations and frees (heap profiles only).
 * Otherwise a later window would count them still, under stacks whose mappings unwind has
 * told the emitters to forget (a child of `launch -- make` that ended, say). */
static void
heap_gone(struct agg *a, uint32_t pid, uint64_t time)
{
	if (!a->win.heap || !pid)
		return;
	struct stack_event ev = { .time = time, .pid = pid, .tid = pid, .type = FR_EXIT };
	struct frame none = { FR_EXIT, 0, NULL };
	queue(a, &none, &ev);
}

/* Without --window, the windows are as long as the recording's (the first target frame
 * says, when collect wrote it), so a replay cuts the windows of the live run.  A reorder
 * window longer than those windows is cut to their length, as --window would require. */
static void
recorded_window(struct agg *a, const struct fr_target *t)
{
	if (env.window_given || a->win.have_origin || !t->window_nanos)
		return;
	env.reorder_ns = windows_set_width(&a->win, t->window_nanos);
	env.window_given = 1; /* later target frames (an exec, the fallback) change nothing */
}

/* 1 when the frame is held back (after an exec or the unwind fallback), else 0. */
static int
on_target(struct agg *a, const struct frame *f, const struct fr_target *t)
{
	recorded_window(a, t);
	windows_origin(&a->win, t->start_time);
	a->target_pid = t->pid;
	if (t->flags & TARGET_OFFCPU)
		a->win.off = &a->off;
	if (t->flags & TARGET_HEAP)
		a->win.heap = &a->heap;
	if (t->flags & TARGET_PHYSICAL) {
		a->win.phys = &a->phys;
		physical_agg_target(&a->phys, t);
	}
	/* Every target frame of a recording carries the same probability. */
	a->off.percent = t->offcpu_percent;
	/* After an exec the new target describes the windows after the exec only. */
	if (a->win.exec_at) {
		if (windows_hold(&a->win, f) < 0)
			errx(1, "out of memory");
		return 1;
	}
	/* The unwind fallback: the new mode applies from the next window on. */
	if (t->since && a->win.have_origin && a->win.start < t->since) {
		if (windows_hold_until(&a->win, f, t->since) < 0)
			errx(1, "out of memory");
		return 1;
	}
	return 0;
}

/* An explicit loss of page events while physical-usage is asked stops the recording with
 * no further window: the window open, whose usage is wrong, is not published. */
static void
on_lost(struct agg *a, const struct fr_lost *l)
{
	int page = physical_agg_lost(&a->phys, l);
	if (page < 0)
		errx(1, "%s", a->phys.err);
	if (page)
		a->win.phys = &a->phys;
	else if (heap_agg_lost(&a->heap, l))
		a->win.heap = &a->heap;
	else if (offcpu_agg_lost(&a->off, l))
		a->win.off = &a->off;
	else if (l->kind == LOST_MALFORMED)
		a->win.st.malformed += l->count;
	else
		a->win.st.lost += l->count;
}

static int
mapping_gone(void *arg, uint32_t id)
{
	if (pins_forgotten(arg, id) < 0)
		errx(1, "out of memory");
	return 0;
}

static void
on_round(struct agg *a, const struct fr_round *r)
{
	struct forget_hold hold = { NULL, mapping_gone, &a->pins };

	release_until(a, r->time);
	/* unwind's list of mappings is due: those that blocks or pages in use name wait. */
	if ((a->win.heap || a->win.phys) && forget_due(&a->forget, a->win.index)) {
		const struct heap_agg *tables[] = { &a->heap, &a->phys.core };
		if (pins_gather(&a->pins, tables, 2) < 0)
			errx(1, "out of memory");
		hold.named = &a->pins.named;
	}
	/* A round is where collect wrote its pieces: they go on as many frames. */
	if (offcpu_agg_flush(&a->off, &a->out) < 0 ||
	    forget_round(&a->forget, r->time, a->win.index, &hold, &a->out) < 0)
		die_output(a);
}

/* Everything left is released and the final window closed before the end goes on. */
static void
on_end(struct agg *a, const struct frame *f, const struct fr_end *end)
{
	drain_until(a, UINT64_MAX);
	if (offcpu_agg_release(&a->off, &a->win, UINT64_MAX, end->time) < 0 ||
	    windows_finish(&a->win, end->time) < 0)
		die_output(a);
	forward(a, f);
}

/* One frame of the input, decoded once (and so checked) here: 1 after the end frame. */
static int
on_frame(struct agg *a, const struct frame *f)
{
	static union stream_any_frame u; /* large: one frame at a time */
	char e[200];

	if (stream_frame_desc(f->type) && stream_get_frame(f, &u, e, sizeof(e)) < 0)
		errx(1, "%s: %s", a->in.name, e);
	switch (f->type) {
	case FR_STACK:
		on_stack(a, f, &u.stack);
		return 0;
	case FR_OFFCPU_STACK:
		on_offcpu(a, &u.offcpu_stack); /* forwarded when released, as the windows count it */
		return 0;
	case FR_HEAP_STACK:
		on_heap(a, f, u.heap_stack.time, u.heap_stack.pid, u.heap_stack.tid);
		return 0;
	case FR_HEAP_FREE:
		on_heap(a, f, u.heap_free.time, u.heap_free.pid, u.heap_free.tid);
		return 0;
	case FR_HEAP_RESET:
		on_heap(a, f, u.heap_reset.time, u.heap_reset.pid, 0);
		return 0;
	case FR_PAGE_STACK:
		on_heap(a, f, u.page_stack.time, u.page_stack.pid, u.page_stack.tid);
		return 0;
	case FR_PAGE_FREE:
		on_heap(a, f, u.page_free.time, u.page_free.pid, 0);
		return 0;
	case FR_TARGET:
		if (on_target(a, f, &u.target))
			return 0;
		break;
	case FR_COMM:
		if ((u.comm.flags & COMM_EXEC) && u.comm.pid == a->target_pid)
			windows_exec(&a->win, u.comm.time);
		if (u.comm.flags & COMM_EXEC)
			heap_gone(a, u.comm.pid, u.comm.time);
		forget_reused(&a->forget, u.comm.pid, u.comm.tid, u.comm.time);
		break;
	case FR_TARGET_EXIT:
		/* A container's init process ended: a restart starts a new window. */
		if (u.target_exit.pid == a->target_pid)
			windows_exec(&a->win, u.target_exit.time);
		break;
	case FR_LOST:
		on_lost(a, &u.lost);
		break;
	case FR_DEBUGINFOD:
		windows_debuginfod(&a->win, &u.debuginfod);
		break;
	case FR_ROUND:
		on_round(a, &u.round);
		break;
	case FR_FORK:
		forget_reused(&a->forget, u.task.pid, u.task.tid, u.task.time);
		break;
	case FR_EXIT:
		if (forget_exit(&a->forget, &u.task) < 0)
			errx(1, "out of memory");
		/* The target's blocks stay: the last window shows what it held at its end. */
		if ((u.task.flags & EXIT_PROCESS) && u.task.pid != a->target_pid)
			heap_gone(a, u.task.pid, u.task.time);
		break;
	case FR_JIT:
		/* Totals: the latest is what the next window to end reports. */
		a->win.jit = u.jit;
		a->win.have_jit = 1;
		return 0;
	case FR_LOCATION:
		if (pins_location(&a->pins, &u.location) < 0)
			errx(1, "out of memory");
		break;
	case FR_FORGET:
		/* unwind's list: held until the windows that may name it are written. */
		if (forget_frame(&a->forget, &u.forget) < 0)
			errx(1, "out of memory");
		return 0;
	case FR_END:
		on_end(a, f, &u.end);
		return 1;
	}
	forward(a, f);
	return 0;
}

/* The reorder buffer, the windows and the off-CPU queue, as the options say: 0, or -1 when
 * out of memory. */
static int
agg_init(struct agg *a)
{
	struct window_opts o = { env.window_ns, env.max_stacks, env.reorder_ns, env.max_pending };

	if (reorder_init(&a->ro, env.max_pending) < 0 || windows_init(&a->win, &a->out, &o) < 0)
		return -1;
	if (heap_agg_init(&a->heap, env.max_stacks) < 0 ||
	    physical_agg_init(&a->phys, env.max_stacks) < 0 ||
	    offcpu_agg_init(&a->off, env.max_stacks, env.max_pending) < 0)
		return -1;
	a->off.keep_pieces = !env.windows_only;
	pins_init(&a->pins);
	return 0;
}

int
main(int argc, char **argv)
{
	static struct agg a;
	struct stream_header h;
	struct frame f;
	char e[200];
	int rc, ended = 0;

	rp_run_as_or_exit(&argc, &argv);
	parse_options(argc, argv);
	/* No file at all: its stdin and stdout are all it uses. */
	if (rp_confine("aggregate", &(struct rp_confine_spec){ 0 }, e, sizeof(e)) < 0)
		errx(1, "%s", e);
	signal(SIGINT, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	if (stream_reader_open(&a.in, 0, "stdin", &h) < 0)
		errx(stream_reader_status(&a.in), "stdin: %s", a.in.err);
	a.in.order.rules = ORDER_BEFORE_WINDOWS; /* a collect stream: no windows, no files */
	if (stream_writer_open(&a.out, 1, "stdout", &h) < 0)
		errx(stream_writer_status(&a.out), "%s", a.out.err);
	a.in.flush_on_wait = &a.out; /* output never waits for input */
	if (agg_init(&a) < 0)
		errx(1, "out of memory");
	while (!ended && (rc = stream_read(&a.in, &f)) > 0)
		ended = on_frame(&a, &f);
	if (!ended && rc < 0)
		errx(stream_reader_status(&a.in), "stdin: %s", a.in.err);
	if (!ended)
		errx(STREAM_EXIT_INPUT_ENDED, "stdin: truncated stream: it ended without an end frame");
	/* Frames after the end (none are expected) are forwarded untouched. */
	while ((rc = stream_read(&a.in, &f)) > 0)
		forward(&a, &f);
	if (rc < 0)
		errx(stream_reader_status(&a.in), "stdin: %s", a.in.err);
	if (stream_flush(&a.out) < 0)
		die_output(&a);
	reorder_release(&a.ro);
	windows_release(&a.win);
	offcpu_agg_release_all(&a.off);
	heap_agg_release(&a.heap);
	forget_release(&a.forget);
	pins_release(&a.pins);
	stream_reader_release(&a.in);
	stream_writer_release(&a.out);
	return 0;
}
