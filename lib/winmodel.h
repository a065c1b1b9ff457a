/*
 * The window model shared by the derived emitters (emit-svg, emit-collapsed): the stream's
 * definitions (lib/defs.h) and the stacks of the window currently open, kept until its end
 * frame so an emitter can lay them out as a whole.  It also turns a window stack into the
 * frame labels every derived format shows, root to leaf:
 *
 *   root   the process name: comm of the pid, else the target's comm, else "pid N"
 *   lines  each location's lines, outermost inlined function first; a location without
 *          lines is "[<mapping file basename>]", as pprof names it, or "<unknown>"
 *
 * Each label has a kind (kernel, user, unsymbolized) for colouring and annotation.
 */
#ifndef RP_WINMODEL_H
#define RP_WINMODEL_H

#include <stddef.h>
#include <stdint.h>

#include "defs.h"
#include "idmap.h"
#include "stream.h"

enum wframe_kind {
	WF_ROOT = 0,
	WF_USER = 1,
	WF_KERNEL = 2,
	WF_UNSYMBOLIZED = 3,
};

/* One label: text is not NUL-terminated and lives until the next winmodel_frames call or
 * the next definition. */
struct wframe {
	const char *name;
	uint32_t len;
	uint8_t kind;
};

/* Room for the root and every inlined line of a full stack. */
#define WINMODEL_MAX_FRAMES (1 + STREAM_MAX_LOCS * STREAM_MAX_LINES)

struct wstack {
	uint32_t pid, tid;
	uint64_t count, nanos;
	size_t locs;            /* index of the first location id in winmodel.locs, leaf first */
	uint16_t nlocs;
};

struct winmodel {
	struct defs defs;
	int offcpu;             /* the window's stacks are its FR_WINDOW_OFFCPU_STACKs */
	int open;               /* between a window start and its end */
	uint32_t index;
	uint64_t start, end;    /* event clock */
	struct wstack *stacks;
	size_t nstacks, cap_stacks;
	uint32_t *locs;
	size_t nlocs, cap_locs;
	uint64_t total_count, total_nanos;
	char *labels;           /* "[basename]" of each mapping, for unsymbolized frames */
	size_t nlabels, cap_labels;
	struct idmap label_ix;  /* mapping id -> offset in labels */
	char rootbuf[32];
	char err[200];
};

void winmodel_init(struct winmodel *w);
void winmodel_release(struct winmodel *w);

/* Takes a definition, thread name, window start or window stack; other frame types are
 * ignored.  0, or -1 with w->err (corrupt frame, undefined reference, out of order, out of
 * memory). */
int winmodel_take(struct winmodel *w, const struct frame *f);
/* Decodes the window end f into *we and checks it closes the open window; the stacks stay
 * until winmodel_take sees the next window start.  0 or -1 with w->err. */
int winmodel_end(struct winmodel *w, const struct frame *f, struct fr_window_end *we);

/* Writes the labels of stack s, root first, into out (WINMODEL_MAX_FRAMES entries);
 * returns how many.  References were checked when the stack was taken. */
size_t winmodel_frames(struct winmodel *w, const struct wstack *s, struct wframe *out);

#endif
