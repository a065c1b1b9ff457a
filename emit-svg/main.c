/*
 * emit-svg: writes a static SVG flame graph of every window's CPU time.
 *
 * Reads the rustprofile stream on stdin and copies it to stdout unchanged (tee-like).  It
 * keeps the stream's definitions and the open window's stacks (lib/winmodel.h); at
 * FR_WINDOW_END it builds the window's call tree (flame.h), streams the SVG (svg.h) into a
 * fsynced temporary file in the output directory, emits an FR_FILE frame (kind "svg-cpu",
 * not required: a derived output) naming "cpu-<session>-<index>-<start>.svg", then
 * forwards the FR_WINDOW_END; the commit stage renames it into place.  With off-CPU data
 * (a target flagged TARGET_OFFCPU) it also draws the window's off-CPU time as
 * "off-cpu-<session>-<index>-<start>.svg" (kind "svg-off-cpu"); with --profiles off-cpu
 * alone, only that.
 * With --folded FILE it instead draws FlameGraph folded text and writes the SVG to stdout.
 * A corrupt or truncated stream stops it with a one-line reason and exit status 1 (4 when
 * the stream ended early, 3 when its reader stopped: lib/stream.h), after removing the
 * temporary file it was writing, if any.
 * Confined (lib/confine.h, docs/privileges.md) to files beneath the output directory,
 * or with --folded to reading FILE.
 */
#include <err.h>
#include <limits.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "confine.h"
#include "fsutil.h"
#include "bufout.h"
#include "flame.h"
#include "folded.h"
#include "outname.h"
#include "announce.h"
#include "stream.h"
#include "svg.h"
#include "tmpfile.h"
#include "winmodel.h"

static struct env {
	const char *output;
	const char *folded;
} env = {
	.output = ".",
};

struct state {
	struct stream_reader in;
	struct stream_writer out;
	struct stream_header hdr;
	struct winmodel wm;
	struct winmodel off;    /* the off-CPU stacks of the same windows, when collected */
	struct bufout buf;
	struct wframe frames[WINMODEL_MAX_FRAMES];
};

static void
usage(FILE *f, int status)
{
	fprintf(f,
		"usage: emit-svg [--output DIR] < stream > stream\n"
		"       emit-svg --folded FILE > svg\n"
		"\n"
		"Copies the rustprofile stream from stdin to stdout and writes, for every window,\n"
		"a static SVG flame graph of its CPU time (frame widths in CPU nanoseconds, no\n"
		"scripts, a title with label, value and share on every frame) to a temporary file\n"
		"in DIR, announced by a file frame before the window's end frame (the commit stage\n"
		"renames it into place).  At most 100000 frames are drawn; a cut graph says so.\n"
		"\n"
		"  -o, --output DIR   directory for the temporary SVG files (default .)\n"
		"  -f, --folded FILE  draw FlameGraph folded stacks from FILE (- for stdin)\n"
		"                     instead, writing the SVG to stdout\n"
		"  -h, --help         show this help\n");
	exit(status);
}

static void
parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "folded", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char why[PATH_MAX + 64];
	int c;

	while ((c = getopt_long(argc, argv, "o:f:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			env.output = optarg;
			break;
		case 'f':
			env.folded = optarg;
			break;
		case 'h':
			usage(stdout, 0);
			break;
		default:
			usage(stderr, 2);
		}
	}
	if (optind != argc)
		usage(stderr, 2);
	if (env.folded)
		return;
	if (fs_check_dir(env.output, why, sizeof(why)) < 0)
		errx(1, "%s", why);
}

/* Writes beneath the output directory only; with --folded it writes no file and reads
 * only FILE. */
static void
confine(void)
{
	struct rp_confine_path p[] = { { env.output, RP_CONFINE_READ | RP_CONFINE_WRITE } };
	struct rp_confine_spec spec = { p, 1, 0 };
	char why[PATH_MAX + 100];

	if (env.folded)
		p[0] = (struct rp_confine_path){ env.folded, RP_CONFINE_READ };
	if (env.folded && !strcmp(env.folded, "-"))
		spec.npaths = 0;
	if (rp_confine("emit-svg", &spec, why, sizeof(why)) < 0)
		errx(1, "%s", why);
}

/* "2026-11-29 10:52:50.019" in UTC. */
static void
utc_time(char *buf, size_t len, int64_t unix_ns)
{
	time_t sec = (time_t)(unix_ns / 1000000000);
	long ms = (long)(unix_ns % 1000000000 / 1000000);
	struct tm tm;

	if (unix_ns < 0 || !gmtime_r(&sec, &tm)) {
		snprintf(buf, len, "%" PRId64 " ns", unix_ns);
		return;
	}
	snprintf(buf, len, "%04d-%02d-%02d %02d:%02d:%02d.%03ld", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
}

static void
window_subtitle(char *buf, size_t len, const struct state *s, const struct winmodel *m,
		const struct fr_window_end *we)
{
	char from[64], to[64];

	utc_time(from, sizeof(from), stream_unix_ns(we->start, s->hdr.clock_offset_ns));
	utc_time(to, sizeof(to), stream_unix_ns(we->end, s->hdr.clock_offset_ns));
	/* The end's time of day; a time utc_time could not show as a date stays whole. */
	const char *to_time = strlen(to) > 11 ? to + 11 : to;
	snprintf(buf, len, "%s profile, window %u: %s to %s UTC, total %" PRIu64 " ns "
		 "(%.3f s) in %" PRIu64 " %s", m->offcpu ? "off-cpu" : "cpu", we->index, from,
		 to_time, m->total_nanos, (double)m->total_nanos / 1e9, m->total_count,
		 m->offcpu ? "intervals" : "samples");
}

/* Builds the window's tree and streams its SVG into t; exits on failure. */
static void
write_svg(struct state *s, struct winmodel *m, const struct fr_window_end *we,
	  struct tmpfile *t)
{
	struct flame tree;
	char sub[512];
	struct svg_head h = { m->offcpu ? "Off-CPU flame graph" : "CPU flame graph", sub, "ns" };
	size_t i, n;

	if (flame_init(&tree, FLAME_MAX_NODES) < 0)
		goto oom;
	for (i = 0; i < m->nstacks; i++) {
		n = winmodel_frames(m, &m->stacks[i], s->frames);
		if (flame_add(&tree, s->frames, n, m->stacks[i].nanos) < 0)
			goto oom;
	}
	if (flame_sort(&tree) < 0)
		goto oom;
	window_subtitle(sub, sizeof(sub), s, m, we);
	bufout_init(&s->buf, t);
	if (svg_write(&tree, &h, &s->buf) < 0)
		goto oom;
	flame_release(&tree);
	if (bufout_flush(&s->buf) < 0 || tmpfile_finish(t) < 0) {
		warnx("%s", t->err);
		tmpfile_discard(t);
		exit(1);
	}
	return;
oom:
	tmpfile_discard(t);
	errx(1, "window %u: out of memory", we->index);
}

/* Draws model m's window into a temporary file named after prefix; *ff announces it. */
static void
write_one(void *arg, struct winmodel *m, const char *prefix, const char *kind,
	  const struct fr_window_end *we, struct tmpfile *t, struct fr_file *ff, char *name,
	  size_t namelen)
{
	struct state *s = arg;
	if (outname_format(name, namelen, prefix, s->hdr.session_id, we->index,
			   stream_unix_ns(we->start, s->hdr.clock_offset_ns), "svg") < 0)
		errx(1, "window %u: file name too long", we->index);
	if (tmpfile_create(t, env.output, name) < 0)
		errx(1, "%s", t->err);
	write_svg(s, m, we, t);
	*ff = announce_file(we->index, 0, kind, name, t);
}

static void
end_window(struct state *s, const struct frame *f)
{
	static const char *const kinds[2] = { "svg-cpu", "svg-off-cpu" };
	announce_models(&s->out, s->in.name, &s->wm, &s->off, kinds, f, write_one, s);
}

/* --folded: one SVG of a folded file on stdout. */
static int
draw_folded(struct state *s)
{
	FILE *f = strcmp(env.folded, "-") ? fopen(env.folded, "r") : stdin;
	struct tmpfile out = { .fd = 1, .path = "stdout", .name = "stdout" };
	struct folded_stats st = { 0 };
	struct flame tree;
	char sub[512];
	struct svg_head h = { "Flame graph", sub, "samples" };

	if (!f)
		err(1, "cannot open '%s'", env.folded);
	if (flame_init(&tree, FLAME_MAX_NODES) < 0)
		errx(1, "out of memory");
	if (folded_read(f, &tree, s->frames, &st) < 0) {
		if (tree.err[0])
			errx(1, "%s: %s", env.folded, tree.err);
		err(1, "cannot read '%s'", env.folded);
	}
	if (st.ignored)
		warnx("%s: ignored %" PRIu64 " lines with an invalid format", env.folded,
		      st.ignored);
	if (flame_sort(&tree) < 0)
		errx(1, "out of memory");
	snprintf(sub, sizeof(sub), "folded stacks from '%s', total %" PRIu64 " samples",
		 env.folded, tree.nodes[0].value);
	bufout_init(&s->buf, &out);
	if (svg_write(&tree, &h, &s->buf) < 0)
		errx(1, "out of memory");
	if (bufout_flush(&s->buf) < 0)
		errx(1, "%s", out.err);
	flame_release(&tree);
	if (f != stdin)
		fclose(f);
	if (close(1) < 0)
		err(1, "stdout");
	return 0;
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
	if (winmodel_take(&s->wm, f) < 0)
		errx(1, "%s: %s", s->in.name, s->wm.err);
	/* Its own copy of the definitions, only when off-CPU windows will come. */
	if (s->wm.defs.profile_offcpu && winmodel_take(&s->off, f) < 0)
		errx(1, "%s: %s", s->in.name, s->off.err);
}

int
main(int argc, char **argv)
{
	static struct state s;  /* large (frame and output buffers): keep it off the stack */
	struct frame f;
	int rc;

	parse_args(argc, argv);
	confine();
	/* Ctrl-C stops collect, which ends the stream; this stage finishes at end of input. */
	signal(SIGINT, SIG_IGN);
	tmpfile_remove_on_term();
	if (env.folded)
		return draw_folded(&s);
	if (stream_reader_open(&s.in, 0, "stdin", &s.hdr) < 0)
		errx(stream_reader_status(&s.in), "%s: %s", s.in.name, s.in.err);
	/* Behind fanout, the windows shed for it are missing. */
	s.in.order.rules = ORDER_UNIQUE_STACKS | ORDER_WINDOW_GAPS;
	if (stream_writer_open(&s.out, 1, "stdout", &s.hdr) < 0)
		errx(stream_writer_status(&s.out), "%s: %s", s.out.name, s.out.err);
	s.in.flush_on_wait = &s.out; /* output never waits for input */
	winmodel_init(&s.wm);
	winmodel_init(&s.off);
	s.off.offcpu = 1;
	while ((rc = stream_read(&s.in, &f)) > 0)
		on_frame(&s, &f);
	if (rc < 0)
		errx(stream_reader_status(&s.in), "%s: %s", s.in.name, s.in.err);
	if (s.wm.open)
		errx(STREAM_EXIT_INPUT_ENDED, "%s: truncated stream: it ends inside window %u", s.in.name, s.wm.index);
	if (!s.in.seen_end)
		errx(STREAM_EXIT_INPUT_ENDED, "%s: truncated stream: it ended without an end frame", s.in.name);
	if (stream_flush(&s.out) < 0)
		errx(stream_writer_status(&s.out), "%s: %s", s.out.name, s.out.err);
	winmodel_release(&s.wm);
	winmodel_release(&s.off);
	stream_reader_release(&s.in);
	stream_writer_release(&s.out);
	if (close(1) < 0)
		err(1, "stdout");
	return 0;
}
