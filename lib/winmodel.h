/*
 * The window model shared by the derived emitters (emit-svg, emit-collapsed): the stacks
 * of the window currently open, CPU and off-CPU, kept until its end frame so an emitter can
 * lay them out as a whole, over the stream's definitions (lib/defs.h, one copy, kept by the
 * emitter skeleton: lib/emitter.h).  It also turns a window stack into the
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
	uint64_t alloc_objects, alloc_space; /* heap stacks: the window's allocations */
	size_t locs;            /* index of the first location id in wset.locs, leaf first */
	uint16_t nlocs;
};

/* The stacks of one profile of the window: CPU (FR_WINDOW_STACK) or off-CPU time
 * (FR_WINDOW_OFFCPU_STACK). */
struct wset {
	int offcpu;
	int heap;               /* allocation stacks: count is inuse_objects, nanos inuse_space */
	int open;               /* it holds the open window's stacks */
	struct wstack *stacks;
	size_t nstacks, cap_stacks;
	uint32_t *locs;
	size_t nlocs, cap_locs;
	uint64_t total_count, total_nanos;
};

struct winmodel {
	const struct defs *defs;        /* the stream's (the emitter skeleton keeps them) */
	struct wset cpu, off, heap;
	/* Every allocation stack of the window with its four values (heap keeps only those
	 * with in-use bytes, the widths of the derived outputs): OTLP's heap profile. */
	struct wset heap_all;
	char *labels;           /* "[basename]" of each mapping, for unsymbolized frames */
	size_t nlabels, cap_labels;
	struct idmap label_ix;  /* mapping id -> offset in labels */
	uint64_t compactions;   /* the defs' passes the labels have followed */
	char rootbuf[32];
	char err[200];
};

void winmodel_init(struct winmodel *w, const struct defs *d);
void winmodel_release(struct winmodel *w);

/* A window starts: the CPU set holds its stacks, the off-CPU set too when offcpu, the heap
 * set when heap. */
void winmodel_begin(struct winmodel *w, int offcpu, int heap);
/* Keeps a stack of the open window in its set (one for a set the window does not hold is
 * left out).  0, or -1 with w->err (an undefined reference, out of memory). */
int winmodel_stack(struct winmodel *w, int offcpu, const struct fr_window_stack *s);
/* Keeps an allocation stack of the open window in the heap set, weighed by its in-use
 * bytes (a stack with none has no width and is left out), and in heap_all whatever its
 * values.  0, or -1 with w->err. */
int winmodel_heap_stack(struct winmodel *w, const struct fr_window_heap_stack *s);
/* After the definitions took f: the label of a new mapping, or the labels anew once a
 * pass gave back what FR_FORGET named.  0, or -1 with w->err (out of memory). */
int winmodel_frame(struct winmodel *w, const struct frame *f);
/* The window ended; its stacks stay until the next window starts. */
void winmodel_end(struct winmodel *w);

/* Writes the labels of stack s of set, root first, into out (WINMODEL_MAX_FRAMES
 * entries); returns how many.  References were checked when the stack was taken. */
size_t winmodel_frames(struct winmodel *w, const struct wset *set, const struct wstack *s,
		       struct wframe *out);

#endif
