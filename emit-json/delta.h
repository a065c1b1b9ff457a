/*
 * The in-use values of each heap stack in the previous window, so that a window's JSON
 * carries signed deltas: a stack is matched by pid, tid and its location ids, as aggregate
 * keys it.  A stack of the previous window that the current one no longer has is "gone":
 * its delta is minus what it held.
 */
#ifndef RP_EMIT_JSON_DELTA_H
#define RP_EMIT_JSON_DELTA_H

#include <stddef.h>
#include <stdint.h>

#include "winmodel.h"

struct delta_entry {
	uint32_t pid, tid;
	uint16_t nlocs;
	size_t locs;            /* into delta_gen.locs */
	uint64_t inuse_objects, inuse_space;
	int seen;               /* the current window has it too */
};

/* One window's heap stacks, sorted by key. */
struct delta_gen {
	struct delta_entry *e;
	size_t n, cap;
	uint32_t *locs;
	size_t nlocs, cap_locs;
};

struct delta {
	struct delta_gen prev, cur;
	char err[120];
};

void delta_release(struct delta *d);
/* Takes the heap stacks of the window (set: every allocation stack, whatever its values)
 * as the current generation.  0, or -1 with d->err. */
int delta_take(struct delta *d, const struct wset *set);
/* The previous in-use values of stack s of the current window (0 when it is new). */
void delta_prev(struct delta *d, const struct wset *set, const struct wstack *s,
		uint64_t *objects, uint64_t *space);
/* After the window is written: the current generation becomes the previous one. */
void delta_next(struct delta *d);

#endif
