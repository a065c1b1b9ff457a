/*
 * emit-collapsed: writes the folded stacks of every window, for flamegraph.pl, speedscope
 * and other FlameGraph-style tools.
 *
 * Reads the rustprofile stream on stdin and copies it to stdout unchanged (tee-like).  It
 * keeps the stream's definitions and the open window's stacks (lib/winmodel.h); at
 * FR_WINDOW_END it writes "cpu-<session>-<index>-<start>.collapsed" as a fsynced temporary
 * file in the output directory, emits an FR_FILE frame (kind "collapsed-cpu", not required)
 * naming it, then forwards the FR_WINDOW_END; the commit stage renames it into place.
 * Each line is "process;frame;...;leaf value", the value being the stack's CPU nanoseconds
 * in the window, so the lines carry exactly the stacks and values of the window's pprof.
 * With off-CPU data (a target flagged TARGET_OFFCPU) "off-cpu-...collapsed" (kind
 * "collapsed-off-cpu") holds the off-CPU stacks the same way, values in off-CPU
 * nanoseconds (interval counts with --samples); with --profiles off-cpu alone, only it.
 * A corrupt or truncated stream stops it with a one-line reason and exit status 1 (4 when
 * the stream ended early, 3 when its reader stopped: lib/stream.h), after removing the
 * temporary file it was writing, if any.
 * Confined (lib/confine.h, docs/privileges.md) to files beneath the output directory.
 */
#include <err.h>
#include <limits.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "confine.h"
#include "fsutil.h"
#include "bufout.h"
#include "fold.h"
#include "outname.h"
#include "announce.h"
#include "stream.h"
#include "tmpfile.h"
#include "winmodel.h"

static struct env {
	const char *output;
	int annotate;
	int samples;
} env = {
	.output = ".",
};

struct state {
	struct stream_reader in;
	struct stream_writer out;
	struct stream_header hdr;
	struct winmodel wm;
	struct winmodel off;    /* the off-CPU stacks of the same windows, when collected */
	struct fold fold;
	struct bufout buf;
};

static void
usage(FILE *f, int status)
{
	fprintf(f,
		"usage: emit-collapsed [--output DIR] [--annotate] [--samples] < stream > stream\n"
		"\n"
		"Copies the rustprofile stream from stdin to stdout and writes, for every window,\n"
		"its folded stacks (\"process;caller;...;leaf value\", one line per distinct stack,\n"
		"sorted bytewise) to a temporary file in DIR, announced by a file frame before the\n"
		"window's end frame (the commit stage renames it into place).  Values are CPU\n"
		"nanoseconds, the pprof's default sample value; ';' in names becomes ':'.\n"
		"\n"
		"  -o, --output DIR   directory for the temporary files (default .)\n"
		"  -a, --annotate     append \"_[k]\" to kernel frames (flamegraph.pl colours them)\n"
		"  -s, --samples      values are sample counts instead of CPU nanoseconds\n"
		"  -h, --help         show this help\n");
	exit(status);
}

static void
parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "annotate", no_argument, NULL, 'a' },
		{ "samples", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char why[PATH_MAX + 64];
	int c;

	while ((c = getopt_long(argc, argv, "o:ash", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			env.output = optarg;
			break;
		case 'a':
			env.annotate = 1;
			break;
		case 's':
			env.samples = 1;
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

	if (rp_confine("emit-collapsed", &spec, why, sizeof(why)) < 0)
		errx(1, "%s", why);
}

/* Folds model m's window into a temporary file named after prefix; *ff announces it. */
static void
write_one(void *arg, struct winmodel *m, const char *prefix, const char *kind,
	  const struct fr_window_end *we, struct tmpfile *t, struct fr_file *ff, char *name,
	  size_t namelen)
{
	struct state *s = arg;
	if (outname_format(name, namelen, prefix, s->hdr.session_id, we->index,
			   stream_unix_ns(we->start, s->hdr.clock_offset_ns), "collapsed") < 0)
		errx(1, "window %u: file name too long", we->index);
	if (fold_window(&s->fold, m) < 0)
		errx(1, "window %u: %s", we->index, s->fold.err);
	if (tmpfile_create(t, env.output, name) < 0)
		errx(1, "%s", t->err);
	bufout_init(&s->buf, t);
	fold_write(&s->fold, &s->buf);
	if (bufout_flush(&s->buf) < 0 || tmpfile_finish(t) < 0) {
		warnx("%s", t->err);
		tmpfile_discard(t);
		exit(1);
	}
	*ff = announce_file(we->index, 0, kind, name, t);
}

static void
end_window(struct state *s, const struct frame *f)
{
	static const char *const kinds[2] = { "collapsed-cpu", "collapsed-off-cpu" };
	announce_models(&s->out, s->in.name, &s->wm, &s->off, kinds, f, write_one, s);
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
	if (stream_reader_open(&s.in, 0, "stdin", &s.hdr) < 0)
		errx(stream_reader_status(&s.in), "%s: %s", s.in.name, s.in.err);
	s.in.order.rules = ORDER_UNIQUE_STACKS;
	if (stream_writer_open(&s.out, 1, "stdout", &s.hdr) < 0)
		errx(stream_writer_status(&s.out), "%s: %s", s.out.name, s.out.err);
	s.in.flush_on_wait = &s.out; /* output never waits for input */
	winmodel_init(&s.wm);
	winmodel_init(&s.off);
	s.off.offcpu = 1;
	fold_init(&s.fold);
	s.fold.annotate = env.annotate;
	s.fold.samples = env.samples;
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
	fold_release(&s.fold);
	winmodel_release(&s.wm);
	winmodel_release(&s.off);
	stream_reader_release(&s.in);
	stream_writer_release(&s.out);
	if (close(1) < 0)
		err(1, "stdout");
	return 0;
}
