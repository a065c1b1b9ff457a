/*
 * fanout: feeds the derived emitters (SVG, Firefox) beside the main path, so that a slow
 * or stopped emitter never holds up collection (manual: "Output files and retention").
 *
 * Reads the window stream on stdin and writes it on stdout for commit.  Each --branch is an
 * emitter started by the driver with its input and output on two FIFOs.  When a window ends,
 * an emitter that has given back every window it was sent gets the whole window; one still
 * writing an earlier window sheds it: it gets only the frames later windows need
 * (definitions, mappings, the target), not the window's stacks.  Window ends leave in order,
 * each after the emitters that got it gave it back, preceded by their file frames and with
 * their statistics (firefox.*) and fanout's own (output_backpressure.*) added.  Frames
 * after a waiting window end wait with it, in memory; stdin is read on regardless.
 * At most --max-pending-windows windows wait: when one more ends, the oldest is published
 * without the files of the emitters that have not given it back (a warning in its
 * diagnostics says so), and what they write for it later is sent to commit to be removed.
 * So a stopped emitter costs later windows their derived files, never their pprof and
 * diagnostics, and fanout's memory stays bounded.
 * SIGTERM (the driver's, when the user stops a run whose collect has already ended) stops
 * the waiting: every window still held is published at once without the files of the
 * emitters that have not given it back, with a warning, and fanout exits without waiting
 * for those emitters, so a stopped emitter can hold up the end of a run only until the
 * user says stop.  The completion budget (--completion-budget, 30 s) does the same by
 * itself once the stream's end frame has waited that long, so a run ends within the budget
 * after its recording ended.  Either way the exit status is 5 when a window went without
 * some derived files.
 * An emitter that fails or ends early is an error: one line, exit 1, after forwarding what
 * was complete.
 * Confined (lib/confine.h, docs/privileges.md) to its branches' FIFOs.
 */
#include <err.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "branch.h"
#include "confine.h"
#include "defaults.h"
#include "grow.h"
#include "parse.h"
#include "runas.h"
#include "stream.h"

#define MAX_BRANCHES 8
#define DEFAULT_MAX_PENDING 3
#define MAX_MAX_PENDING 1000
#define EXIT_SKIPPED 5 /* published, but some windows without a branch's files */

/* A window end on its way out, with what it waits for. */
struct held {
	uint32_t index;
	size_t at;              /* offset of its FR_WINDOW_END in the out queue */
	unsigned expect;        /* bit i: branch i got the window whole */
	unsigned abandoned;     /* bit i: published without branch i's files */
	unsigned shed_for;      /* bit i: shed for branch i, busy with an earlier window */
	int at_stop;            /* abandoned because the run was stopped (SIGTERM) */
	uint64_t shed, skipped_files, pending;
};

static struct fanout {
	struct branch br[MAX_BRANCHES];
	unsigned nbr;
	struct stream_reader in;
	struct stream_writer out;
	struct stream_header hdr;
	struct rawbuf window;   /* frames since the last window end, for the branches */
	struct rawbuf outq;     /* frames waiting behind a held window end */
	size_t outq_pos;        /* bytes of outq already written */
	struct held *held;
	size_t nheld, capheld, held_pos;
	unsigned max_pending;   /* windows that may wait for a branch at once */
	uint64_t budget_ns;     /* how long the end may wait for the branches (0: forever) */
	uint64_t deadline;      /* CLOCK_MONOTONIC ns when that ends, from the end frame */
	int check;
	uint8_t *end;           /* the end frame's payload, written last */
	uint32_t end_len;
} F = { .max_pending = DEFAULT_MAX_PENDING };

/* Set by SIGTERM: windows stop waiting for the branches. */
static volatile sig_atomic_t stopping;
/* Set when the completion budget ran out (the warnings say so). */
static int out_of_budget;
/* Windows published without each branch because of the stop, for the closing message. */
static unsigned stop_skipped[MAX_BRANCHES];

static void
on_term(int sig)
{
	(void)sig;
	stopping = 1;
}

static void
usage(FILE *f, int status)
{
	fprintf(f,
		"usage: fanout --branch NAME=IN,OUT [--branch ...] [--max-pending-windows N]\n"
		"              < stream > stream\n"
		"\n"
		"Copies the window stream from stdin to stdout and feeds each branch, a derived\n"
		"emitter reading the FIFO IN and writing the FIFO OUT (started beforehand, e.g.\n"
		"'emit-svg --output DIR < IN > OUT'), without ever waiting for it: a window that\n"
		"ends while a branch is still writing an earlier one is shed for that branch.\n"
		"Each window end goes out after the branches that got the window, preceded by\n"
		"their file frames, with output_backpressure.* statistics (derived_outputs_shed,\n"
		"pending_windows, skipped_derived_files, otlp_skipped).  At most %d branches.\n"
		"\n"
		"  --max-pending-windows N  windows that may wait for a branch at once (1..%d,\n"
		"                           default %d); when one more ends, the oldest is\n"
		"                           published without the files of the branches that have\n"
		"                           not given it back, with a warning, and the files they\n"
		"                           write for it later are removed (commit)\n"
		"\n"
		"  --completion-budget DURATION  how long the windows still waiting at the end of\n"
		"                           the stream may wait for the branches (default "
		RP_DEFAULT_COMPLETION_BUDGET ";\n"
		"                           0: no limit); then they are published as at SIGTERM\n"
		"  --check                  validate the options and exit\n"
		"  --run-as UID:GID         first argument, as root: become that user\n"
		"\n"
		"SIGTERM publishes every window still waiting at once, without the files of the\n"
		"branches that have not given it back, and ends without waiting for them.\n"
		"Exit status 5: every window was published, some without a branch's files because\n"
		"of SIGTERM or the completion budget (the warnings name them).\n",
		MAX_BRANCHES, MAX_MAX_PENDING, DEFAULT_MAX_PENDING);
	exit(status);
}

static void
parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "branch", required_argument, NULL, 'b' },
		{ "max-pending-windows", required_argument, NULL, 'p' },
		{ "completion-budget", required_argument, NULL, 'B' },
		{ "check", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	F.budget_ns = rp_default_ns(RP_DEFAULT_COMPLETION_BUDGET);
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'h')
			usage(stdout, 0);
		if (c == 'p') {
			uint64_t v;
			char why[200];
			if (parse_u64(optarg, 1, MAX_MAX_PENDING, &v, why, sizeof(why)) < 0)
				errx(1, "--max-pending-windows: %s", why);
			F.max_pending = (unsigned)v;
			continue;
		}
		if (c == 'B') {
			char why[200];
			if (parse_duration(optarg, &F.budget_ns, why, sizeof(why)) < 0)
				errx(1, "--completion-budget: %s", why);
			continue;
		}
		if (c == 'c') {
			F.check = 1;
			continue;
		}
		if (c != 'b')
			errx(1, "unknown option or missing value '%s' (see --help)",
			     argv[optind - 1]);
		char *eq = strchr(optarg, '='), *comma = eq ? strchr(eq, ',') : NULL;
		if (!eq || !comma || eq == optarg || comma == eq + 1 || !comma[1])
			errx(1, "--branch wants NAME=IN,OUT, not '%s'", optarg);
		if (F.nbr == MAX_BRANCHES)
			errx(1, "at most %d branches", MAX_BRANCHES);
		*eq = *comma = 0;
		F.br[F.nbr++] = (struct branch){ .name = optarg, .in_path = eq + 1,
						 .out_path = comma + 1 };
	}
	if (optind < argc)
		errx(1, "unexpected argument '%s' (see --help)", argv[optind]);
	if (F.nbr == 0 && !F.check)
		errx(1, "no --branch given (see --help)");
}

/* Opens nothing but the branches' FIFOs: it writes each IN and reads each OUT. */
static void
confine(void)
{
	struct rp_confine_path p[2 * MAX_BRANCHES];
	struct rp_confine_spec spec = { p, 0, 0, NULL, 0 };
	char why[PATH_MAX + 100];

	for (unsigned i = 0; i < F.nbr; i++) {
		p[spec.npaths++] = (struct rp_confine_path){ F.br[i].in_path, RP_CONFINE_WRITE };
		p[spec.npaths++] = (struct rp_confine_path){ F.br[i].out_path, RP_CONFINE_READ };
	}
	if (rp_confine("fanout", &spec, why, sizeof(why)) < 0)
		errx(1, "%s", why);
}

/* Frames that only the window they belong to needs: a shed window's branch skips them. */
static int
window_only(uint32_t type)
{
	switch (type) {
	case FR_STACK:
	case FR_OFFCPU_STACK:
	case FR_HEAP_STACK:     /* its frees and resets go on: they keep the blocks right */
	case FR_PAGE_STACK:     /* its page frees go on, the same */
	case FR_WINDOW_START:
	case FR_WINDOW_STACK:
	case FR_WINDOW_OFFCPU_STACK:
	case FR_WINDOW_HEAP_STACK:
	case FR_WINDOW_PAGE_STACK:
	case FR_WINDOW_END:
	case FR_WARNING:
		return 1;
	}
	return 0;
}

/* Keeps the end frame f to write it last. */
static void
keep_end(const struct frame *f)
{
	if (!(F.end = malloc(f->len ? f->len : 1)))
		errx(1, "out of memory");
	memcpy(F.end, f->data, f->len);
	F.end_len = f->len;
}

static void
shed_copy(const struct rawbuf *all, struct rawbuf *kept)
{
	struct frame f;
	kept->len = 0;
	for (size_t off = 0; rawbuf_next(all, &off, &f);)
		if (!window_only(f.type))
			rawbuf_put(kept, f.type, f.data, f.len);
}

/* A window ended: each branch gets it whole or shed, and its end is held. */
static void
submit(uint32_t index)
{
	static struct rawbuf kept;
	struct held h = { .index = index, .at = F.outq.len, .pending = F.nheld - F.held_pos };

	for (unsigned i = 0; i < F.nbr; i++) {
		struct branch *b = &F.br[i];
		pthread_mutex_lock(&b->mu);
		int busy = b->submitted > b->returned || b->queue.len > 0;
		size_t files = b->files_per_window;
		pthread_mutex_unlock(&b->mu);
		if (busy) {
			shed_copy(&F.window, &kept);
			branch_send(b, &kept, 0);
			h.shed = 1;
			h.shed_for |= 1u << i;
			h.skipped_files += files ? files : 1;
		} else {
			branch_send(b, &F.window, 1);
			h.expect |= 1u << i;
		}
	}
	F.window.len = 0;
	if (grow_array((void **)&F.held, &F.capheld, F.nheld, 1, sizeof(*F.held)) < 0)
		errx(1, "out of memory");
	F.held[F.nheld++] = h;
}

/* Sets a statistic.  A branch got the same window end, so a value it changed (emit-firefox
 * counts its timeline drops into event_order.timeline_events_dropped) is its to give. */
static void
set_stat(struct fr_window_end *we, const char *key, uint64_t value)
{
	for (uint16_t i = 0; i < we->nstats; i++)
		if (str_eq(we->stats[i].key, key)) {
			we->stats[i].value = value;
			return;
		}
	if (we->nstats == STREAM_MAX_STATS)
		errx(1, "window %u: more than %d statistics", we->index, STREAM_MAX_STATS);
	we->stats[we->nstats++] = (struct fr_stat){ { key, (uint16_t)strlen(key) }, value };
}

static void
put(const struct frame *f)
{
	if (stream_forward(&F.out, f) < 0)
		errx(stream_writer_status(&F.out), "%s", F.out.err);
}

/* The oldest window a branch gave back (the caller holds its lock, and nrets > 0). */
static struct ret
take_ret(struct branch *b)
{
	struct ret r = b->rets[0];
	memmove(b->rets, b->rets + 1, (b->nrets - 1) * sizeof(*b->rets));
	b->nrets--;
	return r;
}

/* Passes on what a branch gave back for windows already published without it: their file
 * frames, flagged for commit to remove the temporary files. */
static void
discard_late(struct branch *b)
{
	for (;;) {
		pthread_mutex_lock(&b->mu);
		if (!b->discard || !b->nrets) {
			pthread_mutex_unlock(&b->mu);
			return;
		}
		struct ret r = take_ret(b);
		b->discard--;
		pthread_mutex_unlock(&b->mu);
		struct frame f;
		struct fr_file file;
		char e[200];
		for (size_t off = 0; rawbuf_next(&r.files, &off, &f);) {
			if (stream_get_file(&f, &file, e, sizeof(e)) < 0)
				errx(1, "%s: %s", b->name, e);
			file.flags |= FILE_DISCARD;
			if (stream_put_file(&F.out, &file) < 0)
				errx(stream_writer_status(&F.out), "%s", F.out.err);
		}
		ret_free(&r);
	}
}

/* Too many windows wait, or the run is stopping (at_stop): the oldest, h, stops waiting for
 * the branches that have not given it back, and is counted as shed for them. */
static void
abandon(struct held *h, int at_stop)
{
	for (unsigned i = 0; i < F.nbr; i++) {
		if (!(h->expect & (1u << i)))
			continue;
		struct branch *b = &F.br[i];
		discard_late(b);
		pthread_mutex_lock(&b->mu);
		if (b->nrets == 0) {
			b->discard++;
			h->expect &= ~(1u << i);
			h->abandoned |= 1u << i;
			h->at_stop |= at_stop;
			stop_skipped[i] += at_stop ? 1 : 0;
			h->shed = 1;
			h->skipped_files += b->files_per_window ? b->files_per_window : 1;
		}
		pthread_mutex_unlock(&b->mu);
	}
}

/* Writes window h's end once every branch that got the window gave it back; 0 if not yet. */
static int
release(struct held *h, const struct frame *end)
{
	static struct fr_window_end we;
	struct ret got[MAX_BRANCHES];
	unsigned have = 0;
	char e[200];

	for (unsigned i = 0; i < F.nbr; i++) {
		if (!(h->expect & (1u << i)))
			continue;
		struct branch *b = &F.br[i];
		discard_late(b);
		pthread_mutex_lock(&b->mu);
		int ready = b->nrets > 0, dead = b->dead || b->done;
		uint32_t idx = ready ? b->rets[0].index : 0;
		pthread_mutex_unlock(&b->mu);
		/* Stopping, the driver ends the emitters: release_all_at_stop abandons them. */
		if (!ready && dead && !stopping)
			errx(1, "%s ended before writing window %u%s%s", b->name, h->index,
			     b->err[0] ? ": " : "", b->err);
		if (!ready)
			return 0;
		if (idx != h->index)
			errx(1, "%s gave back window %u where %u was due", b->name, idx,
			     h->index);
	}
	if (stream_get_window_end(end, &we, e, sizeof(e)) < 0)
		errx(1, "stdin: %s", e);
	for (unsigned i = 0; i < F.nbr; i++) {
		if (!(h->expect & (1u << i)))
			continue;
		struct branch *b = &F.br[i];
		pthread_mutex_lock(&b->mu);
		got[have++] = take_ret(b);
		pthread_mutex_unlock(&b->mu);
		struct ret *r = &got[have - 1];
		struct frame file;
		for (size_t off = 0; rawbuf_next(&r->files, &off, &file);)
			put(&file);
		for (size_t k = 0; k < r->nstats; k++)
			set_stat(&we, r->stats[k].key, r->stats[k].value);
	}
	for (unsigned i = 0; i < F.nbr; i++) {
		if (!((h->abandoned | h->shed_for) & (1u << i)))
			continue;
		char text[300], when[80];
		if (h->shed_for & (1u << i))
			snprintf(when, sizeof(when), "as it was still writing an earlier window");
		else if (h->at_stop && out_of_budget)
			snprintf(when, sizeof(when), "within the completion budget of %.3g s",
				 (double)F.budget_ns / 1e9);
		else if (h->at_stop)
			snprintf(when, sizeof(when), "when the run was stopped");
		else
			snprintf(when, sizeof(when), "when %u later windows had ended",
				 F.max_pending);
		int n = snprintf(text, sizeof(text),
				 "%s had not written window %u %s: its files for the window are "
				 "skipped", F.br[i].name, h->index, when);
		uint16_t len = (uint16_t)(n < (int)sizeof(text) ? n : (int)sizeof(text) - 1);
		/* Stamped inside the window: a warning belongs to the window holding its time. */
		struct fr_warning w = { we.end > we.start ? we.end - 1 : we.start, { text, len } };
		if (stream_put_warning(&F.out, &w) < 0)
			errx(stream_writer_status(&F.out), "%s", F.out.err);
	}
	set_stat(&we, "output_backpressure.derived_outputs_shed", h->shed);
	set_stat(&we, "output_backpressure.pending_windows", h->pending);
	set_stat(&we, "output_backpressure.skipped_derived_files", h->skipped_files);
	set_stat(&we, "output_backpressure.otlp_skipped", 0); /* no OTLP export in this build */
	if (stream_put_window_end(&F.out, &we) < 0)
		errx(stream_writer_status(&F.out), "%s", F.out.err);
	for (unsigned i = 0; i < have; i++)
		ret_free(&got[i]);
	return 1;
}

/* Writes out queued frames up to the first window end still waiting for a branch. */
static void
flush_ready(void)
{
	struct frame f;
	for (unsigned i = 0; i < F.nbr; i++)
		discard_late(&F.br[i]);
	for (size_t off = F.outq_pos; rawbuf_next(&F.outq, &off, &f); F.outq_pos = off) {
		if (F.held_pos < F.nheld && F.held[F.held_pos].at == F.outq_pos) {
			if (!release(&F.held[F.held_pos], &f))
				break;
			F.held_pos++;
		} else {
			put(&f);
		}
	}
	if (F.outq_pos == F.outq.len) {
		F.outq.len = F.outq_pos = 0;
		F.nheld = F.held_pos = 0;
	}
}

/* The run is stopping: every held window is published now, without the branches that have
 * not given it back (each release lets the next window's returns be told apart). */
static void
release_all_at_stop(void)
{
	while (F.held_pos < F.nheld) {
		abandon(&F.held[F.held_pos], 1);
		flush_ready();
	}
}

/* Sleeps until branch b has given a window back or ended, or the run is stopping (the
 * caller holds b's lock).  Timed, because a signal does not wake a condition wait. */
static void
wait_branch(struct branch *b)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_nsec += 100 * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(&b->cv, &b->mu, &t);
}

static uint64_t
now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* SIGTERM came, or the completion budget has run out (which then counts as SIGTERM). */
static int
stop_now(void)
{
	if (!stopping && F.deadline && now_ns() >= F.deadline) {
		out_of_budget = 1;
		stopping = 1;
	}
	return stopping;
}

/* After the end frame: waits for the branches to give back the windows they were sent, or
 * for SIGTERM, or for the completion budget to run out. */
static void
drain(void)
{
	if (F.budget_ns)
		F.deadline = now_ns() + F.budget_ns;
	for (unsigned i = 0; i < F.nbr; i++)
		branch_close(&F.br[i]);
	for (;;) {
		if (stop_now())
			release_all_at_stop();
		flush_ready();
		if (F.outq.len == 0)
			break;
		if (stream_flush(&F.out) < 0)
			errx(stream_writer_status(&F.out), "%s", F.out.err);
		/* Sleep until the branch the oldest held window waits for moves. */
		struct held *h = &F.held[F.held_pos];
		for (unsigned i = 0; i < F.nbr; i++) {
			if (!(h->expect & (1u << i)))
				continue;
			struct branch *b = &F.br[i];
			pthread_mutex_lock(&b->mu);
			while (b->nrets == 0 && !b->dead && !b->done && !stop_now())
				wait_branch(b);
			pthread_mutex_unlock(&b->mu);
		}
	}
	/* Windows published without a branch: wait for its files, to have them removed. */
	for (unsigned i = 0; i < F.nbr; i++) {
		struct branch *b = &F.br[i];
		for (;;) {
			discard_late(b);
			pthread_mutex_lock(&b->mu);
			int wait = b->discard > 0 && !b->dead && !b->done && !stop_now();
			if (wait)
				wait_branch(b);
			pthread_mutex_unlock(&b->mu);
			if (!wait)
				break;
		}
	}
}

/* One frame of stdin, up to the end frame (returns 1 there). */
static int
on_frame(const struct frame *f)
{
	static struct fr_window_end we;
	char e[200];

	if (stream_check_frame(f, e, sizeof(e)) < 0)
		errx(1, "stdin: %s", e);
	/* The branches announce their own files; the main path's are commit's. */
	if (f->type != FR_FILE)
		rawbuf_put(&F.window, f->type, f->data, f->len);
	if (f->type == FR_WINDOW_END) {
		if (stream_get_window_end(f, &we, e, sizeof(e)) < 0)
			errx(1, "stdin: %s", e);
		submit(we.index);
	}
	/* Only frames behind a waiting window end wait; the rest go straight on.  The end
	 * frame goes last, after the files of shed windows that drain() passes on. */
	if (f->type == FR_END)
		keep_end(f);
	else if (F.outq.len == 0 && f->type != FR_WINDOW_END)
		put(f);
	else
		rawbuf_put(&F.outq, f->type, f->data, f->len);
	if (F.outq.len)
		flush_ready();
	while (F.nheld - F.held_pos > F.max_pending) {
		abandon(&F.held[F.held_pos], 0);
		flush_ready();
	}
	if (stopping)
		release_all_at_stop();
	return f->type == FR_END;
}

int
main(int argc, char **argv)
{
	struct frame f;
	int rc, ended = 0;

	rp_run_as_or_exit(&argc, &argv);
	parse_args(argc, argv);
	if (F.check)
		return 0;
	confine(); /* before the branch threads start: Landlock binds this thread */
	signal(SIGINT, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	signal(SIGTERM, on_term);
	for (unsigned i = 0; i < F.nbr; i++)
		branch_open(&F.br[i]);
	if (stream_reader_open(&F.in, 0, "stdin", &F.hdr) < 0)
		errx(stream_reader_status(&F.in), "stdin: %s", F.in.err);
	if (stream_writer_open(&F.out, 1, "stdout", &F.hdr) < 0)
		errx(stream_writer_status(&F.out), "%s", F.out.err);
	F.in.flush_on_wait = &F.out; /* output never waits for input */
	for (unsigned i = 0; i < F.nbr; i++)
		branch_start(&F.br[i], &F.hdr);
	while (!ended && (rc = stream_read(&F.in, &f)) > 0)
		ended = on_frame(&f);
	if (!ended && rc < 0)
		errx(stream_reader_status(&F.in), "stdin: %s", F.in.err);
	if (!ended)
		errx(STREAM_EXIT_INPUT_ENDED, "stdin: truncated stream: it ended without an end frame");
	/* Nothing may follow the end frame (the reader says so); it reaches the branches too. */
	if ((rc = stream_read(&F.in, &f)) < 0)
		errx(stream_reader_status(&F.in), "stdin: %s", F.in.err);
	for (unsigned i = 0; i < F.nbr; i++)
		branch_send(&F.br[i], &F.window, 0);
	drain();
	for (unsigned i = 0; i < F.nbr; i++) {
		/* Stopped: an emitter still behind is the driver's to end, not waited for, and
		 * one it ended is no failure. */
		pthread_mutex_lock(&F.br[i].mu);
		int ended = F.br[i].done || F.br[i].dead;
		pthread_mutex_unlock(&F.br[i].mu);
		if (stopping && stop_skipped[i])
			warnx("%s with %s still behind: %u window%s published without its files",
			      out_of_budget ? "completion budget ran out" : "stopped", F.br[i].name,
			      stop_skipped[i], stop_skipped[i] == 1 ? "" : "s");
		if (stopping && (!ended || F.br[i].dead))
			continue;
		branch_join(&F.br[i]);
		if (F.br[i].dead)
			errx(1, "%s: %s", F.br[i].name, F.br[i].err);
	}
	if (stream_write(&F.out, FR_END, F.end, F.end_len) < 0 || stream_flush(&F.out) < 0)
		errx(stream_writer_status(&F.out), "%s", F.out.err);
	stream_writer_release(&F.out);
	stream_reader_release(&F.in);
	rawbuf_free(&F.window);
	rawbuf_free(&F.outq);
	free(F.held);
	free(F.end);
	for (unsigned i = 0; i < F.nbr; i++)
		if (stop_skipped[i])
			return EXIT_SKIPPED;
	return 0;
}
