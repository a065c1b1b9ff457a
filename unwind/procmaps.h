/*
 * The executable mappings of each process, as told by FR_MMAP frames, kept sorted by start
 * address so that every user address can be validated and resolved with a binary search.
 */
#ifndef RP_PROCMAPS_H
#define RP_PROCMAPS_H

#include <stddef.h>
#include <stdint.h>

#include "idmap.h"
#include "stream.h"

struct symmod;

struct map {
	uint64_t start, end, pgoff;
	char *path;
	uint8_t build_id_len;
	uint8_t build_id[STREAM_BUILD_ID_MAX];
	uint32_t mapping_id;     /* 0 until an FR_MAPPING was written for it */
	int sym_tried;           /* symmod looked up (it may still be NULL) */
	struct symmod *sym;
	/* address -> location id of the locations written for mapping_id: they go with the
	 * mapping, so what a process leaves behind is freed with it */
	struct idmap locs;
};

struct proctab;

struct proc {
	uint32_t pid;
	struct proctab *tab;     /* the table that holds it (its gone list) */
	struct map *maps;
	size_t n, cap;
	uint64_t gen;            /* changes whenever maps do: results cached under it expire;
				  * unique among all processes, past and present */
};

struct proctab {
	struct proc *procs;     /* sorted by pid */
	size_t n, cap;
	/* Ids of the written mappings that no process maps any more (replaced, cleared by an
	 * exec, or of a process dropped), for the resolver to forget. */
	uint32_t *gone;
	size_t ngone, capgone;
};

/* The process, created empty if new; NULL when out of memory. */
struct proc *proctab_get(struct proctab *t, uint32_t pid);
/* The process, or NULL when the table has none with that pid. */
struct proc *proctab_find(struct proctab *t, uint32_t pid);
/* Forgets the process and everything kept for its mappings (it ended). */
void proctab_drop(struct proctab *t, uint32_t pid);
/* Adds a mapping, replacing any overlapped part of older ones (a new mmap over old
 * addresses wins, as in the kernel).  0 or -1 when out of memory. */
int proc_map(struct proc *p, const struct fr_mmap *m);
/* Forgets every mapping: the process executed a new image. */
void proc_clear(struct proc *p);
/* Expires what was cached under the process's mappings (fpstack's stacks) as if they had
 * changed: names found for them since. */
void proc_touch(struct proc *p);
/* 1 when the mapping is anonymous memory (where JIT code lives): no file to name it. */
int map_is_anon(const struct map *m);
/* The mapping holding addr, or NULL. */
struct map *proc_find(struct proc *p, uint64_t addr);
void proctab_release(struct proctab *t);

#endif
