/*
 * emit-pprof: writes one gzip-compressed CPU pprof per window of the framed stream.
 *
 * Reads the stream on stdin and copies it to stdout unchanged (tee-like).  It remembers the
 * target, mapping, function and location definitions and thread names for the whole stream,
 * and encodes each window's FR_WINDOW_STACK frames as they pass.  At FR_WINDOW_END it writes
 * the profile to a fsynced temporary file in the output directory, then emits FR_MODULES
 * (the build ids the window refers to, for the module cache's retention) and FR_FILE naming
 * it, then forwards the FR_WINDOW_END.  Renaming into place is the commit stage's job.
 * FR_FORGET gives back the definitions of what no later window can name (lib/defs.h).
 * With off-CPU data (a target flagged TARGET_OFFCPU) the window's FR_WINDOW_OFFCPU_STACK
 * frames make a second, required profile "off-cpu-..." (intervals/count,
 * off_cpu/nanoseconds); a target whose profiles leave out cpu gets no CPU profile.
 * A corrupt or truncated stream stops it with a one-line reason and exit status 1 (4 when
 * the stream ended early, 3 when its reader stopped: lib/stream.h), after removing the
 * temporary file it was writing, if any.
 * Confined (lib/confine.h, docs/privileges.md) to files beneath the output directory.
 */
#include <err.h>
#include <limits.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "confine.h"
#include "fsutil.h"
#include "defs.h"
#include "gzfile.h"
#include "modules.h"
#include "outname.h"
#include "profile.h"
#include "announce.h"
#include "stream.h"
#include "tmpfile.h"

/* Go's pprof writer uses gzip.BestSpeed too: profiles compress well at level 1 already. */
#define GZIP_LEVEL 1

static struct env {
	const char *output;
} env = {
	.output = ".",
};

struct state {
	struct stream_reader in;
	struct stream_writer out;
	struct stream_header hdr;
	struct defs defs;
	struct profile prof;
	struct profile off;     /* the off-CPU profile of the same window */
	struct gzfile gz;
};

static void
usage(FILE *f, int status)
{
	fprintf(f,
		"usage: emit-pprof [--output DIR] < stream > stream\n"
		"\n"
		"Copies the rustprofile stream from stdin to stdout and writes, for every window,\n"
		"a gzip-compressed CPU pprof to a temporary file in DIR, announced by a file frame\n"
		"before the window's end frame (the commit stage renames it into place).\n"
		"\n"
		"  -o, --output DIR   directory for the temporary profile files (default .)\n"
		"  -h, --help         show this help\n");
	exit(status);
}

static void
parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char why[PATH_MAX + 64];
	int c;

	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			env.output = optarg;
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

	if (rp_confine("emit-pprof", &spec, why, sizeof(why)) < 0)
		errx(1, "%s", why);
}

/* Gzips the finished profile buffers into t; 0, or -1 after saying why on stderr. */
static int
write_profile(struct state *s, const struct profile *p, struct tmpfile *t)
{
	const struct pb *parts[] = { &p->samples, &p->rest, &p->strs.enc };
	size_t i;

	if (gzfile_open(&s->gz, t->fd, GZIP_LEVEL) < 0)
		goto gzfail;
	for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		if (gzfile_write(&s->gz, parts[i]->buf, parts[i]->len) < 0)
			goto gzfail;
	if (gzfile_finish(&s->gz) < 0)
		goto gzfail;
	if (tmpfile_finish(t) < 0) {
		warnx("%s", t->err);
		return -1;
	}
	return 0;
gzfail:
	gzfile_release(&s->gz);
	warnx("cannot write '%s': %s", t->path, s->gz.err);
	return -1;
}

/* Gives the window up: the temporary files already written for it, t[0..n), are removed
 * first, or nothing would ever remove them. */
static void __attribute__((noreturn, format(printf, 3, 4)))
give_up(struct tmpfile *t, int n, const char *fmt, ...)
{
	va_list ap;

	for (int i = 0; i < n; i++)
		tmpfile_discard(&t[i]);
	va_start(ap, fmt);
	verrx(1, fmt, ap);
}

/* Ends profile p of the window and writes it to the temporary file t[n] of the given kind
 * (t[0..n) hold the window's earlier files); ff describes it.  Exits 1 on failure, after
 * removing the window's files. */
static void
write_kind(struct state *s, struct profile *p, const char *kind,
	   const struct fr_window_end *we, struct tmpfile *t, int n, struct fr_file *ff,
	   char *name, size_t namelen)
{
	int64_t start_unix = stream_unix_ns(we->start, s->hdr.clock_offset_ns);

	if (profile_end(p, we, s->hdr.clock_offset_ns) < 0)
		give_up(t, n, "%s: %s", s->in.name, p->err);
	if (outname_format(name, namelen, kind, s->hdr.session_id, we->index, start_unix,
			   "pb.gz") < 0)
		give_up(t, n, "window %u: file name too long", we->index);
	if (tmpfile_create(&t[n], env.output, name) < 0)
		give_up(t, n, "%s", t[n].err);
	if (write_profile(s, p, &t[n]) < 0) {
		for (int i = 0; i <= n; i++)
			tmpfile_discard(&t[i]);
		exit(1);
	}
	*ff = announce_file(we->index, FILE_REQUIRED, kind, name, &t[n]);
}

static void
end_window(struct state *s, const struct frame *f)
{
	struct fr_window_end we;
	struct fr_file ff[2];
	struct tmpfile t[2];
	char reason[200], name[2][256];
	int n = 0;

	if (stream_get_window_end(f, &we, reason, sizeof(reason)) < 0)
		errx(1, "%s: %s", s->in.name, reason);
	if (!s->prof.open || we.index != s->prof.index)
		errx(1, "%s: window end %u without its window start", s->in.name, we.index);
	if (s->defs.profile_cpu)
		write_kind(s, &s->prof, "cpu", &we, t, n, &ff[n], name[n], sizeof(name[n])), n++;
	else
		s->prof.open = 0;
	if (s->off.open) {
		write_kind(s, &s->off, "off-cpu", &we, t, n, &ff[n], name[n], sizeof(name[n]));
		n++;
	}
	const struct profile *written[2] = { &s->prof, &s->off };
	if (modules_announce(&s->out, we.index, written, 2) < 0)
		errx(1, "%s: %s", s->out.name, s->out.err[0] ? s->out.err : "out of memory");
	announce_window(&s->out, ff, t, n, f);
}

/* Decodes f into v with the typed decoder dec, or stops with the stream's name. */
#define DECODE(s, dec, f, v)                                                         \
	do {                                                                         \
		char why_[200];                                                      \
		if (dec((f), (v), why_, sizeof(why_)) < 0)                           \
			errx(1, "%s: %s", (s)->in.name, why_);                       \
	} while (0)

/* Remembers a definition or window stack; every frame but the window end is forwarded
 * first, by the caller. */
static void
take_frame(struct state *s, const struct frame *f)
{
	static union {
		struct fr_window_start ws;
		struct fr_window_stack stack;
	} u;                    /* large (a stack): keep it off the stack */

	if (defs_take(&s->defs, f) < 0)
		errx(1, "%s: %s", s->in.name, s->defs.err);
	switch (f->type) {
	case FR_WINDOW_OFFCPU_STACK:
		DECODE(s, stream_get_window_offcpu_stack, f, &u.stack);
		if (!s->off.open || u.stack.index != s->off.index)
			errx(1, "%s: off-CPU stack of window %u outside that window", s->in.name,
			     u.stack.index);
		if (profile_add_stack(&s->off, &u.stack) < 0)
			errx(1, "%s: %s", s->in.name, s->off.err);
		return;
	case FR_WINDOW_START:
		DECODE(s, stream_get_window_start, f, &u.ws);
		if (s->prof.open)
			errx(1, "%s: window %u starts inside window %u", s->in.name, u.ws.index,
			     s->prof.index);
		if (profile_begin(&s->prof, &u.ws) < 0 ||
		    (s->defs.profile_offcpu && profile_begin(&s->off, &u.ws) < 0))
			errx(1, "%s: %s", s->in.name, s->prof.err[0] ? s->prof.err : s->off.err);
		return;
	case FR_WINDOW_STACK:
		DECODE(s, stream_get_window_stack, f, &u.stack);
		if (!s->prof.open || u.stack.index != s->prof.index)
			errx(1, "%s: stack of window %u outside that window", s->in.name,
			     u.stack.index);
		if (profile_add_stack(&s->prof, &u.stack) < 0)
			errx(1, "%s: %s", s->in.name, s->prof.err);
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
	static struct state s;  /* large (gzip buffer): keep it off the stack */
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
	defs_init(&s.defs);
	profile_init(&s.prof, &s.defs);
	profile_init(&s.off, &s.defs);
	s.off.offcpu = 1;
	while ((rc = stream_read(&s.in, &f)) > 0)
		on_frame(&s, &f);
	if (rc < 0)
		errx(stream_reader_status(&s.in), "%s: %s", s.in.name, s.in.err);
	if (s.prof.open)
		errx(STREAM_EXIT_INPUT_ENDED, "%s: truncated stream: it ends inside window %u", s.in.name, s.prof.index);
	if (!s.in.seen_end)
		errx(STREAM_EXIT_INPUT_ENDED, "%s: truncated stream: it ended without an end frame", s.in.name);
	if (stream_flush(&s.out) < 0)
		errx(stream_writer_status(&s.out), "%s: %s", s.out.name, s.out.err);
	profile_release(&s.prof);
	profile_release(&s.off);
	defs_release(&s.defs);
	stream_reader_release(&s.in);
	stream_writer_release(&s.out);
	if (close(1) < 0)
		err(1, "stdout");
	return 0;
}
