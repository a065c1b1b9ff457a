/*
 * emit-json: writes every window as JSON documents that keep each window apart and its
 * values signed (docs/derived-outputs.md, "Per-window JSON"; docs/json-windows.schema.json).
 *
 * Runs on the emitter skeleton (lib/emitter.h) with the window's stacks kept
 * (lib/winmodel.h): the stream on stdin is copied to stdout unchanged; at FR_WINDOW_END it
 * writes, for each profile of the window (CPU, off-CPU, heap), one file
 * "<kind>-<session>-<index>-<start>.json" as a fsynced temporary file in the output
 * directory and an FR_FILE frame (kind "json-cpu", "json-off-cpu", "json-heap"; flags 0,
 * derived) naming it before forwarding the window end; commit renames it into place.  Each
 * stack carries its frames root to leaf, named as the collapsed and SVG outputs name them,
 * its pid, tid and thread name, and its values as the window's pprof has them, so the
 * values of a file sum to that pprof's totals.  Heap stacks add signed deltas of their
 * in-use values against the previous window, and a stack the previous window had that
 * this one has not is listed with zero values and its in-use as a negative delta: the
 * deltas of all windows sum to the last window's in-use totals.
 * A corrupt or truncated stream stops it with a one-line reason and exit status 1 (4 when
 * the stream ended early, 3 when its reader stopped: lib/stream.h), after removing the
 * temporary files of the window it was writing, if any.
 * Confined (lib/confine.h, docs/privileges.md) to files beneath the output directory.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "emitter.h"
#include "window.h"

static int pretty;
static struct jwin w;   /* large (the frame labels of a stack): off the stack */

static void
write_json(struct emitter *e, const struct emitter_profile *p)
{
	struct emitter_file *f = emitter_create(e, p->prefix, "json");
	int fd = dup(f->t.fd);
	FILE *out = fd < 0 ? NULL : fdopen(fd, "w");

	if (!out) {
		if (fd >= 0)
			close(fd);
		emitter_give_up(e, "window %u: %s", e->we.index, strerror(errno));
	}
	int rc = jwin_write(&w, e, p, out);
	if (fclose(out) != 0 && rc == 0) {
		snprintf(w.j.err, sizeof(w.j.err), "write error: %s", strerror(errno));
		rc = -1;
	}
	if (rc < 0)
		emitter_give_up(e, "window %u: %s", e->we.index,
				w.delta.err[0] ? w.delta.err : w.j.err);
	emitter_finish(e, NULL, 0, p->kind);
}

static void
init(struct emitter *e)
{
	(void)e;
	memset(&w, 0, sizeof(w));
	w.pretty = pretty;
}

static void
release(struct emitter *e)
{
	(void)e;
	delta_release(&w.delta);
}

static void
option(int key, const char *value)
{
	(void)key;
	(void)value;
	pretty = 1;
}

static const struct emitter_ops json_ops = {
	.name = "emit-json",
	.synopsis = "usage: emit-json [--output DIR] [--pretty] < stream > stream\n",
	.writes = "one JSON document per profile (cpu, off-cpu, heap) to a temporary file in DIR,\n"
		  "announced by a file frame before the window's end frame (the commit stage\n"
		  "renames it into place): the window, its sample types and each stack's frames\n"
		  "(root to leaf), labels and values; heap stacks add signed in-use deltas\n"
		  "against the previous window (docs/json-windows.schema.json).\n",
	.output_help = "directory for the temporary files (default .)",
	.column = 19,
	.options = (const struct emitter_option[]){
		{ "pretty", no_argument, 'p', "-p, --pretty",
		  "indent the documents (two spaces a level)" },
		{ 0 },
	},
	.order_rules = ORDER_UNIQUE_STACKS,
	.keep_stacks = 1,
	.option = option,
	.init = init,
	.release = release,
	.kind_prefix = "json-",
	.profile = write_json,
};

int
main(int argc, char **argv)
{
	return emitter_main(&json_ops, argc, argv);
}
