/*
 * Distinct stacks of one window: (pid, tid, leaf-first location ids) -> sample count and
 * nanoseconds.  Bounded by --max-stacks: once full, known stacks keep accumulating and a new
 * stack is refused, so the caller can count it as an aggregation drop.
 */
#ifndef RP_STACKTAB_H
#define RP_STACKTAB_H

#include <stddef.h>
#include <stdint.h>

struct stack_entry {
	uint64_t hash;
	uint64_t count, nanos;
	uint32_t pid, tid;
	uint16_t nlocs;
	uint32_t locs[]; /* nlocs ids */
};

struct stacktab {
	struct stack_entry **slots; /* open addressing, power-of-two size */
	size_t nslots, n, max;
};

int stacktab_init(struct stacktab *t, size_t max);
/* 1 added or accumulated, 0 refused because the table is full, -1 out of memory. */
int stacktab_add(struct stacktab *t, uint32_t pid, uint32_t tid, const uint32_t *locs,
		 uint16_t nlocs, uint64_t count, uint64_t nanos);
/* Empties the table for the next window, keeping its capacity. */
void stacktab_clear(struct stacktab *t);
void stacktab_release(struct stacktab *t);

#endif
