/*
 * emit-firefox: writes one gzip-compressed Firefox processed profile per window of the
 * framed stream, as JSON or as a JSLB container.
 *
 * Reads the stream on stdin and copies it to stdout unchanged (tee-like), except that each
 * window's FR_FILE goes out just before its FR_WINDOW_END.  It remembers the definitions and
 * thread names for the whole stream and keeps the FR_STACK frames aggregate forwards, each a
 * timestamped sample of the next window to close, up to --max-timeline-samples per window
 * (the rest are counted and left out).  At FR_WINDOW_END it lays them out as one profile
 * (threads per PID/TID, samples in time order with CPU-time weights; with off-CPU data each
 * thread's FR_OFFCPU_STACK pieces form a track "NAME (off-CPU)" beside it, one sample per
 * piece at its start weighing its length, under the same --max-timeline-samples), writes it
 * to a fsynced temporary file in the output directory and announces it with FR_FILE, kind
 * "firefox", not required: commit renames it into place.  A corrupt stream stops it with a one-line
 * reason and exit status 1, after removing the temporary file it was writing, if any.
 * Confined (lib/confine.h, docs/privileges.md) to files beneath the output directory.
 */
#include <err.h>
#include <limits.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "confine.h"
#include "defaults.h"
#include "fsutil.h"
#include "defs.h"
#include "fxfile.h"
#include "fxmodel.h"
#include "outname.h"
#include "parse.h"
#include "announce.h"
#include "stream.h"
#include "timeline.h"
#include "tmpfile.h"

#define EM_X86_64_ 62
#define EM_AARCH64_ 183

static struct env {
	const char *output;
	enum fx_format format;
	uint64_t max_samples;
} env = {
	.output = ".",
	.format = FX_JSON,
	.max_samples = RP_DEFAULT_MAX_TIMELINE_SAMPLES,
};

struct state {
	struct stream_reader in;
	struct stream_writer out;
	struct stream_header hdr;
	struct defs defs;
	struct timeline tl;
	struct fxmodel model;
	int open;               /* a window start was seen and its end was not */
	uint32_t index;
};

static void
usage(FILE *f, int status)
{
	fprintf(f,
		"usage: emit-firefox [--output DIR] [--format json|jslb]\n"
		"                    [--max-timeline-samples N] < stream > stream\n"
		"\n"
		"Copies the rustprofile stream from stdin to stdout and writes, for every window,\n"
		"a gzip-compressed Firefox processed profile (firefox-...json.gz or .jslb.gz) to a\n"
		"temporary file in DIR, announced by a file frame before the window's end frame\n"
		"(the commit stage renames it into place).\n"
		"\n"
		"  -o, --output DIR              directory for the temporary files (default .)\n"
		"  -f, --format json|jslb        processed-profile JSON, or the same profile in a\n"
		"                                JsonSlabs container (default json)\n"
		"  -n, --max-timeline-samples N  timestamped samples kept per window; later ones\n"
		"                                are left out and counted (default "
		RP_DEFAULT_TEXT(RP_DEFAULT_MAX_TIMELINE_SAMPLES) ")\n"
		"  -h, --help                    show this help\n");
	exit(status);
}

static void
parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, 'f' },
		{ "max-timeline-samples", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char why[PATH_MAX + 64];
	char e[200];
	int c;

	while ((c = getopt_long(argc, argv, "o:f:n:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			env.output = optarg;
			break;
		case 'f':
			if (strcmp(optarg, "json") && strcmp(optarg, "jslb"))
				errx(1, "--format: '%s' is not json or jslb", optarg);
			env.format = strcmp(optarg, "json") ? FX_JSLB : FX_JSON;
			break;
		case 'n':
			/* 2^24 keeps a window's sample columns well inside jslb's u32 offsets */
			if (parse_u64(optarg, 1, 1u << 24, &env.max_samples, e, sizeof(e)) < 0)
				errx(1, "--max-timeline-samples: %s", e);
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
	if (fs_check_dir(env.output, why, sizeof(why)) < 0)
		errx(1, "%s", why);
}

/* Writes beneath the output directory only; reads nothing but its stdin. */
static void
confine(void)
{
	const struct rp_confine_path p[] = { { env.output, RP_CONFINE_READ | RP_CONFINE_WRITE } };
	const struct rp_confine_spec spec = { p, 1, 0 };
	char why[PATH_MAX + 100];

	if (rp_confine("emit-firefox", &spec, why, sizeof(why)) < 0)
		errx(1, "%s", why);
}

static const char *
base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s && s[1] ? s + 1 : path;
}

static void
fill_meta(const struct state *s, const struct fr_window_end *we, struct fxmeta *mt)
{
	const struct defs *d = &s->defs;

	*mt = (struct fxmeta){
		.start = we->start, .end = we->end, .clock_offset_ns = s->hdr.clock_offset_ns,
		.monotonic = s->hdr.clockid == CLOCK_MONOTONIC,
		.cpu_frequency = d->cpu_frequency, .defs = d,
		.arch = s->hdr.e_machine == EM_X86_64_ ? "x86_64"
			: s->hdr.e_machine == EM_AARCH64_ ? "aarch64" : NULL,
	};
	mt->product = d->comm.len ? defs_str(d, d->comm)
		      : d->exe.len ? base_name(defs_str(d, d->exe)) : "rustprofile";
}

/* Writes the window's profile to a new temporary file; returns it, or exits. */
static void
write_window(struct state *s, const struct fr_window_end *we, struct tmpfile *t, char *name,
	     size_t namelen)
{
	struct fxmeta mt;
	char why[300];
	int64_t start_unix = stream_unix_ns(we->start, s->hdr.clock_offset_ns);

	if (fxmodel_build(&s->model, &s->tl) < 0)
		errx(1, "%s: window %u: %s", s->in.name, we->index, s->model.err);
	if (outname_format(name, namelen, "firefox", s->hdr.session_id, we->index, start_unix,
			   env.format == FX_JSLB ? "jslb.gz" : "json.gz") < 0)
		errx(1, "window %u: file name too long", we->index);
	if (tmpfile_create(t, env.output, name) < 0)
		errx(1, "%s", t->err);
	fill_meta(s, we, &mt);
	if (fxfile_write(t->fd, env.format, &s->model, &s->tl, &mt, why, sizeof(why)) < 0) {
		tmpfile_discard(t);
		errx(1, "cannot write '%s/%s': %s", env.output, name, why);
	}
	if (tmpfile_finish(t) < 0) {
		warnx("%s", t->err);
		tmpfile_discard(t);
		exit(1);
	}
}

/* The window's timeline counts go into its statistics for the diagnostics: the drop count
 * replaces aggregate's event_order.timeline_events_dropped, and firefox.* keys are added. */
static void
add_timeline_stats(struct fr_window_end *we, uint64_t kept, uint64_t dropped)
{
	static const struct str key_drop = { "event_order.timeline_events_dropped", 35 };
	int found = 0;

	for (unsigned i = 0; i < we->nstats; i++) {
		if (we->stats[i].key.len == key_drop.len &&
		    memcmp(we->stats[i].key.p, key_drop.p, key_drop.len) == 0) {
			we->stats[i].value += dropped;
			found = 1;
		}
	}
	if (!found && we->nstats < STREAM_MAX_STATS)
		we->stats[we->nstats++] = (struct fr_stat){ key_drop, dropped };
	if (we->nstats + 2 <= STREAM_MAX_STATS) {
		we->stats[we->nstats++] = (struct fr_stat){ { "firefox.dropped_samples", 23 },
							    dropped };
		we->stats[we->nstats++] = (struct fr_stat){ { "firefox.timeline_samples", 24 },
							    kept };
	}
}

static void
end_window(struct state *s, const struct frame *f)
{
	static struct fr_window_end we;     /* large: keep it off the stack */
	struct fr_file ff;
	struct tmpfile t;
	char reason[200], name[256];

	if (stream_get_window_end(f, &we, reason, sizeof(reason)) < 0)
		errx(1, "%s: %s", s->in.name, reason);
	if (!s->open || we.index != s->index)
		errx(1, "%s: window end %u without its window start", s->in.name, we.index);
	write_window(s, &we, &t, name, sizeof(name));
	add_timeline_stats(&we, s->tl.n, s->tl.dropped);
	ff = announce_file(we.index, 0, "firefox", name, &t);
	if (stream_put_file(&s->out, &ff) < 0 || stream_put_window_end(&s->out, &we) < 0 ||
	    stream_flush(&s->out) < 0) {
		tmpfile_discard(&t);
		errx(stream_writer_status(&s->out), "%s: %s", s->out.name, s->out.err);
	}
	tmpfile_release(&t);
	timeline_clear(&s->tl);
	s->open = 0;
}

/* Decodes f into v with the typed decoder dec, or stops with the stream's name. */
#define DECODE(s, dec, f, v)                                                         \
	do {                                                                         \
		char why_[200];                                                      \
		if (dec((f), (v), why_, sizeof(why_)) < 0)                           \
			errx(1, "%s: %s", (s)->in.name, why_);                       \
	} while (0)

/* Remembers a definition, thread name, window start or sample; the caller forwards every
 * frame but the window end first. */
static void
take_frame(struct state *s, const struct frame *f)
{
	static union {
		struct fr_window_start ws;
		struct fr_stack stack;
		struct fr_offcpu_stack off;
	} u;                    /* large (a stack): keep it off the stack */
	int rc = defs_take(&s->defs, f);

	if (rc < 0)
		errx(1, "%s: %s", s->in.name, s->defs.err);
	switch (f->type) {
	case FR_STACK:
		DECODE(s, stream_get_stack, f, &u.stack);
		if (timeline_add(&s->tl, &u.stack) < 0)
			errx(1, "out of memory");
		return;
	case FR_OFFCPU_STACK:
		DECODE(s, stream_get_offcpu_stack, f, &u.off);
		if (timeline_add_offcpu(&s->tl, &u.off) < 0)
			errx(1, "out of memory");
		return;
	case FR_WINDOW_START:
		DECODE(s, stream_get_window_start, f, &u.ws);
		if (s->open)
			errx(1, "%s: window %u starts inside window %u", s->in.name, u.ws.index,
			     s->index);
		s->open = 1;
		s->index = u.ws.index;
		return;
	}
}

/* One frame of the stream: a window end is written out, anything else forwarded first. */
static void
on_frame(struct state *s, const struct frame *f)
{
	if (f->type == FR_WINDOW_END) {
		end_window(s, f);
		return;
	}
	if (stream_forward(&s->out, f) < 0)
		errx(stream_writer_status(&s->out), "%s: %s", s->out.name, s->out.err);
	take_frame(s, f);
}

int
main(int argc, char **argv)
{
	static struct state s;
	struct frame f;
	int rc;

	parse_args(argc, argv);
	confine();
	/* Ctrl-C stops collect, which ends the stream; this stage finishes at end of input. */
	signal(SIGINT, SIG_IGN);
	tmpfile_remove_on_term();
	if (stream_reader_open(&s.in, 0, "stdin", &s.hdr) < 0)
		errx(stream_reader_status(&s.in), "%s: %s", s.in.name, s.in.err);
	/* Behind fanout, the windows shed for it are missing. */
	s.in.order.rules = ORDER_WINDOW_GAPS;
	if (stream_writer_open(&s.out, 1, "stdout", &s.hdr) < 0)
		errx(stream_writer_status(&s.out), "%s: %s", s.out.name, s.out.err);
	s.in.flush_on_wait = &s.out; /* output never waits for input */
	defs_init(&s.defs);
	timeline_init(&s.tl, env.max_samples);
	fxmodel_init(&s.model, &s.defs);
	while ((rc = stream_read(&s.in, &f)) > 0)
		on_frame(&s, &f);
	if (rc < 0)
		errx(stream_reader_status(&s.in), "%s: %s", s.in.name, s.in.err);
	if (s.open)
		errx(STREAM_EXIT_INPUT_ENDED, "%s: truncated stream: it ends inside window %u", s.in.name, s.index);
	if (!s.in.seen_end)
		errx(STREAM_EXIT_INPUT_ENDED, "%s: truncated stream: it ended without an end frame", s.in.name);
	if (stream_flush(&s.out) < 0)
		errx(stream_writer_status(&s.out), "%s: %s", s.out.name, s.out.err);
	fxmodel_release(&s.model);
	timeline_release(&s.tl);
	defs_release(&s.defs);
	stream_reader_release(&s.in);
	stream_writer_release(&s.out);
	if (close(1) < 0)
		err(1, "stdout");
	return 0;
}
