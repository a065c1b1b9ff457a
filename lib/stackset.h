/*
 * A set of window stacks (pid, tid and location ids), to tell a stack that a window
 * repeats from a new one.  Keys are kept whole, so a hash collision is never taken for a
 * duplicate.
 */
#ifndef RP_STACKSET_H
#define RP_STACKSET_H

#include <stddef.h>
#include <stdint.h>

struct stackset {
	uint32_t *words;        /* the keys, one after another: pid, tid, n, locs[n] */
	size_t nwords, capwords;
	struct stackset_slot {
		uint64_t hash;
		uint32_t off;   /* into words, plus 1; 0 is an empty slot */
	} *slots;
	size_t nslots, count;   /* nslots: a power of two, or 0 */
};

/* The hash of a stack's key: FNV-1a (with aggregate's seed) over pid, tid, n and the
 * locations.  Every table of stacks uses it; keys are compared whole on a match. */
uint64_t stack_key_hash(uint32_t pid, uint32_t tid, const uint32_t *locs, uint16_t n);
/* 1: added, 0: already there, -1: out of memory.  An empty set needs no init. */
int stackset_add(struct stackset *s, uint32_t pid, uint32_t tid, const uint32_t *locs,
		 uint16_t nlocs);
/* Empties the set, keeping its memory for the next window. */
void stackset_clear(struct stackset *s);
void stackset_release(struct stackset *s);

#endif
