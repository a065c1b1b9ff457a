/*
 * emit-collapsed: writes the folded stacks of every window, for flamegraph.pl, speedscope
 * and other FlameGraph-style tools.
 *
 * Runs on the emitter skeleton (lib/emitter.h): the stream on stdin is copied to stdout
 * unchanged (tee-like).  It keeps the open window's stacks (lib/winmodel.h); at
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
#include "bufout.h"
#include "emitter.h"
#include "fold.h"
#include "stream.h"
#include "winmodel.h"

static struct env {
	int annotate;
	int samples;
} env;

struct state {
	struct winmodel wm;
	struct fold fold;
	struct bufout buf;
};

static struct state s;  /* large (frame and output buffers): keep it off the stack */

/* Folds set m of the window into a new file named after prefix, announced as kind. */
static void
write_folded(struct emitter *e, const struct wset *m, const char *prefix, const char *kind)
{
	if (fold_window(&s.fold, &s.wm, m) < 0)
		emitter_give_up(e, "window %u: %s", e->we.index, s.fold.err);
	struct emitter_file *f = emitter_create(e, prefix, "collapsed");
	bufout_init(&s.buf, &f->t);
	fold_write(&s.fold, &s.buf);
	emitter_finish(e, &s.buf, 0, kind);
}

static void
end_window(struct emitter *e, struct fr_window_end *we)
{
	(void)we;
	if (e->defs.profile_cpu)
		write_folded(e, &s.wm.cpu, "cpu", "collapsed-cpu");
	if (s.wm.off.open)
		write_folded(e, &s.wm.off, "off-cpu", "collapsed-off-cpu");
	winmodel_end(&s.wm);
}

static void
init(struct emitter *e)
{
	winmodel_init(&s.wm, &e->defs);
	fold_init(&s.fold);
	s.fold.annotate = env.annotate;
	s.fold.samples = env.samples;
}

static void
release(struct emitter *e)
{
	(void)e;
	fold_release(&s.fold);
	winmodel_release(&s.wm);
}

static const char *
begin(struct emitter *e, const struct fr_window_start *ws)
{
	(void)ws;
	winmodel_begin(&s.wm, e->offcpu);
	return NULL;
}

static const char *
stack(struct emitter *e, int offcpu, const struct fr_window_stack *st)
{
	(void)e;
	return winmodel_stack(&s.wm, offcpu, st) < 0 ? s.wm.err : NULL;
}

static const char *
frame(struct emitter *e, const struct frame *f)
{
	(void)e;
	return winmodel_frame(&s.wm, f) < 0 ? s.wm.err : NULL;
}

static void
option(int key, const char *value)
{
	(void)value;
	if (key == 'a')
		env.annotate = 1;
	else
		env.samples = 1;
}

static const struct emitter_option options[] = {
	{ "annotate", no_argument, 'a', "-a, --annotate",
	  "append \"_[k]\" to kernel frames (flamegraph.pl colours them)" },
	{ "samples", no_argument, 's', "-s, --samples",
	  "values are sample counts instead of CPU nanoseconds" },
	{ NULL, 0, 0, NULL, NULL },
};

static const struct emitter_ops collapsed_ops = {
	.name = "emit-collapsed",
	.usage = "usage: emit-collapsed [--output DIR] [--annotate] [--samples] < stream > stream\n"
		 "\n"
		 "Copies the rustprofile stream from stdin to stdout and writes, for every window,\n"
		 "its folded stacks (\"process;caller;...;leaf value\", one line per distinct stack,\n"
		 "sorted bytewise) to a temporary file in DIR, announced by a file frame before the\n"
		 "window's end frame (the commit stage renames it into place).  Values are CPU\n"
		 "nanoseconds, the pprof's default sample value; ';' in names becomes ':'.\n"
		 "\n",
	.output_help = "directory for the temporary files (default .)",
	.column = 19,
	.options = options,
	.order_rules = ORDER_UNIQUE_STACKS,
	.option = option,
	.init = init,
	.release = release,
	.begin = begin,
	.stack = stack,
	.frame = frame,
	.end = end_window,
};

int
main(int argc, char **argv)
{
	return emitter_main(&collapsed_ops, argc, argv);
}
