/* The emitter skeleton (emitter.h): options, the tee, the window model, the hand-over. */
#include "emitter.h"

#include <err.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "confine.h"
#include "fsutil.h"
#include "outname.h"

#define MAX_OPTIONS 16          /* an emitter's own, beside --output and --help */

/* ---- options ---- */

/* One option line: flags, then the help under the column, continued lines aligned. */
static void
option_line(FILE *f, int column, const char *flags, const char *help)
{
	const char *p = help, *nl;

	fprintf(f, "  %-*s", column, flags);
	while ((nl = strchr(p, '\n'))) {
		fprintf(f, "%.*s\n  %*s", (int)(nl - p), p, column, "");
		p = nl + 1;
	}
	fprintf(f, "%s\n", p);
}

static void __attribute__((noreturn))
usage(const struct emitter_ops *ops, FILE *f, int status)
{
	const struct emitter_option *o;

	fputs(ops->usage, f);
	option_line(f, ops->column, "-o, --output DIR", ops->output_help);
	for (o = ops->options; o && o->name; o++)
		option_line(f, ops->column, o->flags, o->help);
	option_line(f, ops->column, "-h, --help", "show this help");
	exit(status);
}

/* getopt_long's tables for --output, the emitter's options and --help. */
static void
option_tables(const struct emitter_ops *ops, struct option *longs, char *shorts)
{
	const struct emitter_option *o;
	size_t n = 0, k = 0;

	longs[n++] = (struct option){ "output", required_argument, NULL, 'o' };
	shorts[k++] = 'o';
	shorts[k++] = ':';
	for (o = ops->options; o && o->name && n < MAX_OPTIONS + 1; o++) {
		longs[n++] = (struct option){ o->name, o->has_arg, NULL, o->key };
		shorts[k++] = (char)o->key;
		if (o->has_arg == required_argument)
			shorts[k++] = ':';
	}
	longs[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	longs[n] = (struct option){ NULL, 0, NULL, 0 };
	shorts[k++] = 'h';
	shorts[k] = '\0';
}

static void
parse_args(struct emitter *e, int argc, char **argv)
{
	const struct emitter_ops *ops = e->ops;
	struct option longs[MAX_OPTIONS + 3];
	char shorts[2 * MAX_OPTIONS + 5];
	int c;

	option_tables(ops, longs, shorts);
	while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		if (c == 'o')
			e->output = optarg;
		else if (c == 'h')
			usage(ops, stdout, 0);
		else if (c == '?' || c == ':' || !ops->option)
			usage(ops, stderr, 2);
		else
			ops->option(c, optarg);
	}
	if (optind != argc && ops->stray_is_error)
		errx(1, "unexpected argument '%s'", argv[optind]);
	if (optind != argc)
		usage(ops, stderr, 2);
}

/* Writes beneath the output directory only, or in the other mode reads only its file
 * (nothing but stdin for "-"). */
static void
confine(const struct emitter *e, const char *alone)
{
	struct rp_confine_path p[] = { { e->output, RP_CONFINE_READ | RP_CONFINE_WRITE } };
	struct rp_confine_spec spec = { p, 1, 0 };
	char why[PATH_MAX + 100];

	if (alone)
		p[0] = (struct rp_confine_path){ alone, RP_CONFINE_READ };
	if (alone && !strcmp(alone, "-"))
		spec.npaths = 0;
	if (rp_confine(e->ops->name, &spec, why, sizeof(why)) < 0)
		errx(1, "%s", why);
}

/* ---- the hand-over ---- */

void
emitter_give_up(struct emitter *e, const char *fmt, ...)
{
	va_list ap;

	for (int i = 0; i < e->nfiles; i++)
		tmpfile_discard(&e->files[i].t);
	e->nfiles = 0;
	va_start(ap, fmt);
	verrx(1, fmt, ap);
}

struct emitter_file *
emitter_create(struct emitter *e, const char *prefix, const char *ext)
{
	const struct fr_window_end *we = &e->we;
	struct emitter_file *f = &e->files[e->nfiles];

	if (e->nfiles == EMITTER_MAX_FILES)
		emitter_give_up(e, "window %u: too many files", we->index);
	if (outname_format(f->name, sizeof(f->name), prefix, e->hdr.session_id, we->index,
			   stream_unix_ns(we->start, e->hdr.clock_offset_ns), ext) < 0)
		emitter_give_up(e, "window %u: file name too long", we->index);
	if (tmpfile_create(&f->t, e->output, f->name) < 0)
		emitter_give_up(e, "%s", f->t.err);
	/* Counted once it exists: a failure from here on removes it too. */
	e->nfiles++;
	return f;
}

void
emitter_finish(struct emitter *e, struct bufout *b, uint32_t flags, const char *kind)
{
	struct emitter_file *f = &e->files[e->nfiles - 1];

	if ((b && bufout_flush(b) < 0) || tmpfile_finish(&f->t) < 0)
		emitter_give_up(e, "%s", f->t.err);
	f->ff = (struct fr_file){
		.index = e->we.index, .flags = flags,
		.kind = { kind, (uint16_t)strlen(kind) },
		.name = { f->name, (uint16_t)strlen(f->name) },
		.temp = { f->t.name, (uint16_t)strlen(f->t.name) },
	};
}

/* The window's file frames, then its end frame (f, or e->we when the emitter changed it),
 * flushed.  After that the files are commit's; on a write error they are removed. */
static void
hand_over(struct emitter *e, const struct frame *f)
{
	int ok = 1;

	for (int i = 0; ok && i < e->nfiles; i++)
		ok = stream_put_file(&e->out, &e->files[i].ff) == 0;
	if (ok)
		ok = (e->restated ? stream_put_window_end(&e->out, &e->we)
				  : stream_forward(&e->out, f)) == 0;
	ok = ok && stream_flush(&e->out) == 0;
	for (int i = 0; i < e->nfiles; i++)
		ok ? tmpfile_release(&e->files[i].t) : tmpfile_discard(&e->files[i].t);
	e->nfiles = 0;
	if (!ok)
		errx(stream_writer_status(&e->out), "%s: %s", e->out.name, e->out.err);
}

/* ---- the window model ---- */

static void
end_window(struct emitter *e, const struct frame *f)
{
	char why[200];

	if (stream_get_window_end(f, &e->we, why, sizeof(why)) < 0)
		errx(1, "%s: %s", e->in.name, why);
	if (!e->open || e->we.index != e->index)
		errx(1, "%s: window end %u without its window start", e->in.name, e->we.index);
	e->nfiles = 0;
	e->restated = 0;
	e->ops->end(e, &e->we);
	e->open = 0;
	hand_over(e, f);
}

static const char *
begin_window(struct emitter *e, const struct frame *f)
{
	struct fr_window_start ws;

	if (stream_get_window_start(f, &ws, e->why, sizeof(e->why)) < 0)
		return e->why;
	if (e->open) {
		snprintf(e->why, sizeof(e->why), "window %u starts inside window %u", ws.index,
			 e->index);
		return e->why;
	}
	e->open = 1;
	e->index = ws.index;
	e->offcpu = e->defs.profile_offcpu;
	return e->ops->begin ? e->ops->begin(e, &ws) : NULL;
}

static const char *
take_stack(struct emitter *e, const struct frame *f)
{
	static struct fr_window_stack s;        /* large: keep it off the stack */
	int off = f->type == FR_WINDOW_OFFCPU_STACK;

	if ((off ? stream_get_window_offcpu_stack(f, &s, e->why, sizeof(e->why))
		 : stream_get_window_stack(f, &s, e->why, sizeof(e->why))) < 0)
		return e->why;
	if (!e->open || s.index != e->index) {
		snprintf(e->why, sizeof(e->why), "%sstack of window %u outside that window",
			 off ? "off-CPU " : "", s.index);
		return e->why;
	}
	return e->ops->stack(e, off, &s);
}

/* One frame: a window end is handed over, anything else forwarded first. */
static void
on_frame(struct emitter *e, const struct frame *f)
{
	const char *why = NULL;

	if (f->type == FR_WINDOW_END) {
		end_window(e, f);
		return;
	}
	if (stream_forward(&e->out, f) < 0)
		errx(stream_writer_status(&e->out), "%s: %s", e->out.name, e->out.err);
	if (defs_take(&e->defs, f) < 0)
		errx(1, "%s: %s", e->in.name, e->defs.err);
	if (f->type == FR_WINDOW_START)
		why = begin_window(e, f);
	else if ((f->type == FR_WINDOW_STACK || f->type == FR_WINDOW_OFFCPU_STACK) &&
		 e->ops->stack)
		why = take_stack(e, f);
	if (!why && e->ops->frame)
		why = e->ops->frame(e, f);
	if (why)
		errx(1, "%s: %s", e->in.name, why);
}

/* ---- the tee ---- */

void
emitter_open(struct emitter *e, int in, int out)
{
	e->opened = 1;
	if (stream_reader_open(&e->in, in, "stdin", &e->hdr) < 0)
		errx(stream_reader_status(&e->in), "%s: %s", e->in.name, e->in.err);
	e->in.order.rules = e->ops->order_rules;
	if (stream_writer_open(&e->out, out, "stdout", &e->hdr) < 0)
		errx(stream_writer_status(&e->out), "%s: %s", e->out.name, e->out.err);
	e->opened = 2;
	e->in.flush_on_wait = &e->out; /* output never waits for input */
	defs_init(&e->defs);
	e->open = e->nfiles = 0;
	e->opened = 3;
	if (e->ops->init)
		e->ops->init(e);
}

void
emitter_loop(struct emitter *e)
{
	struct frame f;
	int rc;

	while ((rc = stream_read(&e->in, &f)) > 0)
		on_frame(e, &f);
	if (rc < 0)
		errx(stream_reader_status(&e->in), "%s: %s", e->in.name, e->in.err);
	if (e->open)
		errx(STREAM_EXIT_INPUT_ENDED, "%s: truncated stream: it ends inside window %u",
		     e->in.name, e->index);
	if (!e->in.seen_end)
		errx(STREAM_EXIT_INPUT_ENDED,
		     "%s: truncated stream: it ended without an end frame", e->in.name);
	if (stream_flush(&e->out) < 0)
		errx(stream_writer_status(&e->out), "%s: %s", e->out.name, e->out.err);
}

void
emitter_release(struct emitter *e)
{
	if (e->opened >= 3 && e->ops->release)
		e->ops->release(e);
	if (e->opened >= 3)
		defs_release(&e->defs);
	if (e->opened >= 2)
		stream_writer_release(&e->out);
	if (e->opened >= 1)
		stream_reader_release(&e->in);
	e->opened = 0;
}

int
emitter_main(const struct emitter_ops *ops, int argc, char **argv)
{
	static struct emitter e;        /* large (buffers, a window end): off the stack */
	char why[PATH_MAX + 64];
	const char *alone;

	e.ops = ops;
	e.output = ".";
	parse_args(&e, argc, argv);
	alone = ops->alone ? ops->alone() : NULL;
	if (!alone && fs_check_dir(e.output, why, sizeof(why)) < 0)
		errx(1, "%s", why);
	confine(&e, alone);
	/* Ctrl-C stops collect, which ends the stream; this stage finishes at end of input. */
	signal(SIGINT, SIG_IGN);
	tmpfile_remove_on_term();
	if (alone)
		return ops->run_alone();
	emitter_open(&e, 0, 1);
	emitter_loop(&e);
	emitter_release(&e);
	if (close(1) < 0)
		err(1, "stdout");
	return 0;
}
