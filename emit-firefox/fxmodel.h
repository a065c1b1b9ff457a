/*
 * The processed-profile tables of one window, built from its timeline samples and the
 * stream's definitions: libraries (one per mapped file), resources (one per library),
 * functions, sources (file names), frames (one per location and inline depth, outermost
 * function at depth 0), the stack tree (parents before children) and threads with their
 * samples in time order.  Only what the window's samples reference is included.
 */
#ifndef EF_FXMODEL_H
#define EF_FXMODEL_H

#include <stddef.h>
#include <stdint.h>

#include "defs.h"
#include "fxalloc.h"
#include "fxstr.h"
#include "idmap.h"
#include "timeline.h"

enum fx_category {
	FXC_OTHER = 0,
	FXC_USER = 1,
	FXC_KERNEL = 2,
};

struct fxlib {
	const struct def_mapping *m;    /* valid while defs is unchanged (window end) */
	int32_t name;                   /* resource name: the file's base name */
};

struct fxfunc {
	int32_t name, resource, source; /* source -1: null */
	uint32_t line;                  /* first line, 0: null */
};

struct fxframe {
	int64_t address;                /* library-relative, -1: none */
	uint8_t inline_depth, category;
	int32_t func;
	uint32_t line;                  /* 0: null */
};

struct fxthread {
	uint32_t pid, tid;
	int offcpu;                     /* the thread's off-CPU samples, a track of their own */
	size_t first, n;                /* its samples in fxmodel.order */
	size_t first_alloc, n_alloc;    /* its allocations in fxmodel.alloc_order */
};

/* Grows an array member pair (ptr, cap) of a model; used by the table builders. */
#define FX_ARR(T, name) T *name; size_t n_##name, cap_##name

struct fxmodel {
	const struct defs *defs;
	struct fxstr strs;
	struct fxstr lib_paths;         /* library keys, apart from the profile's strings */
	FX_ARR(struct fxlib, libs);
	FX_ARR(struct fxfunc, funcs);
	FX_ARR(int32_t, sources);       /* file name string per source */
	FX_ARR(struct fxframe, frames);
	FX_ARR(int32_t, stack_frame);
	FX_ARR(int32_t, stack_prefix);  /* -1 for a root */
	FX_ARR(struct fxthread, threads);
	FX_ARR(int32_t, sample_stack);  /* per timeline sample, -1: no stack */
	FX_ARR(uint32_t, sample_thread);
	FX_ARR(size_t, order);          /* timeline sample indexes grouped by thread */
	const struct fxalloc *fa;       /* the window's allocations, NULL: none */
	FX_ARR(int32_t, alloc_stack);   /* per allocation entry, -1: no stack */
	FX_ARR(uint32_t, alloc_thread);
	FX_ARR(size_t, alloc_order);    /* allocation entry indexes grouped by thread */
	struct idmap lib_ix, fn_ix, unsym_ix, src_ix, frame_ix, stack_ix, thread_ix;
	/* Some frame has a function from the stream: unwind has symbolized it, and what it
	 * left unnamed no public server names (the front end would send it every library id
	 * and address of the profile, to Mozilla's by default). */
	int symbolicated;
	char err[200];
};

void fxmodel_init(struct fxmodel *m, const struct defs *d);
void fxmodel_release(struct fxmodel *m);
/* Builds the tables of timeline t and of the allocations fa (NULL: none; an allocation
 * goes in the CPU track of its thread), after clearing the previous window's: 0, or -1
 * with m->err (a reference to an undefined location or mapping, or out of memory).  A free
 * whose allocation's stack names a location forgotten since has no stack. */
int fxmodel_build(struct fxmodel *m, const struct timeline *t, const struct fxalloc *fa);


#endif
