/*
 * pins: the mappings that memory still in use names.  unwind forgets a mapping as soon as
 * a new mmap replaces it in a live process (a dlclose, then a dlopen at its address:
 * docs/churn.md), but a heap block or a page allocated under it stays in use, and every
 * later window shows it under its allocation stack.  Were the forget passed on, the
 * emitters would drop that stack's locations at their next compaction and refuse the
 * window ("stack references undefined location").  So aggregate keeps, for each location
 * unwind defined, its mapping; at a round where an FR_FORGET is due it gathers the mappings
 * that the stacks of blocks and pages in use name, and holds those ids back (forget.h)
 * until their last block is freed, or their process ends or executes a new image.
 */
#ifndef RP_AGG_PINS_H
#define RP_AGG_PINS_H

#include <stddef.h>
#include <stdint.h>

#include "heap.h"
#include "idmap.h"
#include "stream.h"

struct pins {
	struct idmap loc;       /* location id -> its mapping id */
	struct idmap nlocs;     /* mapping id -> how many of loc name it */
	struct idmap dead;      /* mappings passed on as forgotten since loc was last swept */
	size_t dead_locs;       /* entries of loc that name them */
	struct idmap named;     /* the mappings in-use memory names, at the latest gathering */
	uint64_t gathered;      /* the tables' changes then, plus one (0: never) */
};

void pins_init(struct pins *p);
void pins_release(struct pins *p);
/* An FR_LOCATION.  0, or -1 when out of memory. */
int pins_location(struct pins *p, const struct fr_location *l);
/* Gathers into p->named the mappings that the stacks of the n tables' entries with live
 * blocks name; nothing to do when no block came or went since the last time (a block
 * that outlives its mapping's forget would otherwise have every round look at every
 * stack).  0, or -1 when out of memory. */
int pins_gather(struct pins *p, const struct heap_agg *const *tables, size_t n);
/* Mapping id has gone out in an FR_FORGET: its locations are dropped from loc in passes
 * once they are many.  0, or -1 when out of memory. */
int pins_forgotten(struct pins *p, uint32_t id);

#endif
