/*
 * emit-svg: writes a static SVG flame graph of every window's CPU time.
 *
 * Runs on the emitter skeleton (lib/emitter.h): the stream on stdin is copied to stdout
 * unchanged (tee-like), the open window's stacks kept until its end (lib/winmodel.h); at
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
 * temporary files of the window it was writing, if any.
 * Confined (lib/confine.h, docs/privileges.md) to files beneath the output directory,
 * or with --folded to reading FILE.
 */
#include <err.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bufout.h"
#include "emitter.h"
#include "flame.h"
#include "folded.h"
#include "stream.h"
#include "svg.h"
#include "winmodel.h"

static struct env {
	const char *folded;
} env;

struct state {
	struct bufout buf;
	struct wframe frames[WINMODEL_MAX_FRAMES];
};

static struct state s;  /* large (frame and output buffers): keep it off the stack */

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
window_subtitle(char *buf, size_t len, const struct emitter *e, const struct wset *m,
		const struct fr_window_end *we)
{
	char from[64], to[64];

	utc_time(from, sizeof(from), stream_unix_ns(we->start, e->hdr.clock_offset_ns));
	utc_time(to, sizeof(to), stream_unix_ns(we->end, e->hdr.clock_offset_ns));
	/* The end's time of day; a time utc_time could not show as a date stays whole. */
	const char *to_time = strlen(to) > 11 ? to + 11 : to;
	if (m->heap) {
		/* Widths are the in-use bytes at the window's end (since attach). */
		snprintf(buf, len, "heap profile, window %u: %s to %s UTC, in use %" PRIu64
			 " bytes (%.1f MiB) in %" PRIu64 " sampled objects, since attach",
			 we->index, from, to_time, m->total_nanos,
			 (double)m->total_nanos / 1048576.0, m->total_count);
		return;
	}
	snprintf(buf, len, "%s profile, window %u: %s to %s UTC, total %" PRIu64 " ns "
		 "(%.3f s) in %" PRIu64 " %s", m->offcpu ? "off-cpu" : "cpu", we->index, from,
		 to_time, m->total_nanos, (double)m->total_nanos / 1e9, m->total_count,
		 m->offcpu ? "intervals" : "samples");
}

/* Draws one profile of the window into a new file. */
static void
write_svg(struct emitter *e, const struct emitter_profile *p)
{
	const struct fr_window_end *we = &e->we;
	const struct wset *m = p->set;
	struct flame tree;
	char sub[512];
	struct svg_head h = { m->heap ? "Heap flame graph (in-use bytes)" : m->offcpu ?
			      "Off-CPU flame graph" : "CPU flame graph", sub, m->heap ? "bytes" : "ns" };
	struct emitter_file *f = emitter_create(e, p->prefix, "svg");
	size_t i, n;

	if (flame_init(&tree, FLAME_MAX_NODES) < 0)
		goto oom;
	for (i = 0; i < m->nstacks; i++) {
		n = winmodel_frames(&e->wm, m, &m->stacks[i], s.frames);
		if (flame_add(&tree, s.frames, n, m->stacks[i].nanos) < 0)
			goto oom;
	}
	if (flame_sort(&tree) < 0)
		goto oom;
	window_subtitle(sub, sizeof(sub), e, m, we);
	bufout_init(&s.buf, &f->t);
	if (svg_write(&tree, &h, &s.buf) < 0)
		goto oom;
	flame_release(&tree);
	emitter_finish(e, &s.buf, 0, p->kind);
	return;
oom:
	emitter_give_up(e, "window %u: out of memory", we->index);
}

/* --folded: one SVG of a folded file on stdout. */
static int
draw_folded(void)
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
	if (folded_read(f, &tree, s.frames, &st) < 0) {
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
	bufout_init(&s.buf, &out);
	if (svg_write(&tree, &h, &s.buf) < 0)
		errx(1, "out of memory");
	if (bufout_flush(&s.buf) < 0)
		errx(1, "%s", out.err);
	flame_release(&tree);
	if (f != stdin)
		fclose(f);
	if (close(1) < 0)
		err(1, "stdout");
	return 0;
}

static void
option(int key, const char *value)
{
	(void)key;              /* 'f', the only one */
	env.folded = value;
}

static const char *
alone(void)
{
	return env.folded;
}

static int
run_alone(void)
{
	return draw_folded();
}

static const struct emitter_ops svg_ops = {
	.name = "emit-svg",
	.synopsis = "usage: emit-svg [--output DIR] < stream > stream\n"
		    "       emit-svg --folded FILE > svg\n",
	.writes = "a static SVG flame graph of its CPU time (frame widths in CPU nanoseconds, no\n"
		  "scripts, a title with label, value and share on every frame) to a temporary file\n"
		  "in DIR, announced by a file frame before the window's end frame (the commit stage\n"
		  "renames it into place).  At most 100000 frames are drawn; a cut graph says so.\n",
	.output_help = "directory for the temporary SVG files (default .)",
	.column = 19,
	.options = (const struct emitter_option[]){
		{ "folded", required_argument, 'f', "-f, --folded FILE",
		  "draw FlameGraph folded stacks from FILE (- for stdin)\n"
		  "instead, writing the SVG to stdout" },
		{ 0 },
	},
	/* Behind fanout, the windows shed for it are missing. */
	.order_rules = ORDER_UNIQUE_STACKS | ORDER_WINDOW_GAPS,
	.keep_stacks = 1,
	.option = option,
	.alone = alone,
	.run_alone = run_alone,
	.kind_prefix = "svg-",
	.profile = write_svg,
};

int
main(int argc, char **argv)
{
	return emitter_main(&svg_ops, argc, argv);
}
