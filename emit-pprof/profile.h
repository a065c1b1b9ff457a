/*
 * Builds the CPU pprof of one window.  Stacks are encoded into Sample messages as they
 * arrive, so a window costs its encoded samples plus the renumbering tables, never a copy
 * of the stacks.  Only the locations, functions and mappings the window references are
 * written, renumbered densely from 1 in order of first use (the main executable's mapping
 * first).  The result is three buffers that concatenate into one Profile message.
 */
#ifndef EP_PROFILE_H
#define EP_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "defs.h"
#include "idmap.h"
#include "pb.h"
#include "strtab.h"

struct profile {
	const struct defs *defs;
	struct strtab strs;
	struct pb samples;      /* Profile.sample entries */
	struct pb rest;         /* every other field except the string table */

	struct idmap loc_ix;    /* stream location id -> window id (1..) */
	uint32_t *locs;         /* stream location ids in window order */
	size_t nlocs, cap_locs;
	struct idmap fn_ix;     /* stream function id -> window id */
	uint32_t *fns;
	size_t nfns, cap_fns;
	struct idmap map_ix;    /* stream mapping id -> window id */
	uint32_t *maps;
	size_t nmaps, cap_maps;

	int offcpu;             /* an off-CPU profile: intervals/count, off_cpu/nanoseconds */
	int heap;               /* a heap profile: alloc_objects, alloc_space, inuse_* */
	/* A physical memory profile: 1 physical-alloc (alloc_pages, alloc_space), 2
	 * physical-usage (inuse_pages, inuse_space, a snapshot: duration 0). */
	int physical;
	int open;               /* between profile_begin and profile_end */
	int str_failed;         /* a string table insertion ran out of memory */
	uint32_t index;
	uint64_t nstacks;
	int64_t k_pid, k_tid, k_tname, u_pid, u_tid;    /* label key and unit strings */
	int64_t k_labels[DEFS_LABELS];  /* the target's identity labels; -1: left out */
	uint32_t scratch[STREAM_MAX_LOCS];
	char err[200];
};

void profile_init(struct profile *p, const struct defs *d);
void profile_release(struct profile *p);

/* All return 0, or -1 with p->err (a corrupt reference or out of memory). */
int profile_begin(struct profile *p, const struct fr_window_start *ws);
int profile_add_stack(struct profile *p, const struct fr_window_stack *s);
int profile_add_heap_stack(struct profile *p, const struct fr_window_heap_stack *s);
/* A page stack: its allocations in the physical-alloc profile, its tracked pages in the
 * physical-usage one (a stack with none of them is left out). */
int profile_add_page_stack(struct profile *p, const struct fr_window_page_stack *s);
/* Completes the Profile: after this, samples, rest and strs.enc hold the encoding, in that
 * order.  clock_offset_ns converts event time to Unix time. */
int profile_end(struct profile *p, const struct fr_window_end *we, int64_t clock_offset_ns);

#endif
