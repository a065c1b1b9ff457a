/*
 * emit-collapsed: writes the folded stacks of every window, for flamegraph.pl, speedscope
 * and other FlameGraph-style tools.
 *
 * Runs on the emitter skeleton (lib/emitter.h): the stream on stdin is copied to stdout
 * unchanged (tee-like), the open window's stacks kept until its end (lib/winmodel.h); at
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
 * temporary files of the window it was writing, if any.
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
	struct fold fold;
	struct bufout buf;
};

static struct state s;  /* large (frame and output buffers): keep it off the stack */

/* Folds one profile of the window into a new file. */
static void
write_folded(struct emitter *e, const struct emitter_profile *p)
{
	if (fold_window(&s.fold, &e->wm, p->set) < 0)
		emitter_give_up(e, "window %u: %s", e->we.index, s.fold.err);
	struct emitter_file *f = emitter_create(e, p->prefix, "collapsed");
	bufout_init(&s.buf, &f->t);
	fold_write(&s.fold, &s.buf);
	emitter_finish(e, &s.buf, 0, p->kind);
}

static void
init(struct emitter *e)
{
	(void)e;
	fold_init(&s.fold);
	s.fold.annotate = env.annotate;
	s.fold.samples = env.samples;
}

static void
release(struct emitter *e)
{
	(void)e;
	fold_release(&s.fold);
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

static const struct emitter_ops collapsed_ops = {
	.name = "emit-collapsed",
	.synopsis = "usage: emit-collapsed [--output DIR] [--annotate] [--samples] < stream > stream\n",
	.writes = "its folded stacks (\"process;caller;...;leaf value\", one line per distinct stack,\n"
		  "sorted bytewise) to a temporary file in DIR, announced by a file frame before the\n"
		  "window's end frame (the commit stage renames it into place).  Values are CPU\n"
		  "nanoseconds, the pprof's default sample value; ';' in names becomes ':'.\n",
	.output_help = "directory for the temporary files (default .)",
	.column = 19,
	.options = (const struct emitter_option[]){
		{ "annotate", no_argument, 'a', "-a, --annotate",
		  "append \"_[k]\" to kernel frames (flamegraph.pl colours them)" },
		{ "samples", no_argument, 's', "-s, --samples",
		  "values are sample counts instead of CPU nanoseconds" },
		{ 0 },
	},
	.order_rules = ORDER_UNIQUE_STACKS,
	.keep_stacks = 1,
	.option = option,
	.init = init,
	.release = release,
	.kind_prefix = "collapsed-",
	.profile = write_folded,
};

int
main(int argc, char **argv)
{
	return emitter_main(&collapsed_ops, argc, argv);
}
