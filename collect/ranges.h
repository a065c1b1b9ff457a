/*
 * A set of executable address ranges of one process, sorted and disjoint: the frame-pointer
 * calibration and the fallback check user addresses against it, as unwind checks them
 * against the mappings it was sent.
 */
#ifndef COLLECT_RANGES_H
#define COLLECT_RANGES_H

#include <stddef.h>
#include <stdint.h>

struct ranges {
	struct range {
		uint64_t start, end;
	} *r;
	size_t n, cap;
};

/* Adds [start, end); it replaces whatever it overlaps, as a new mapping does. */
void ranges_add(struct ranges *s, uint64_t start, uint64_t end);
/* 1 when a lies in one of the ranges. */
int ranges_has(const struct ranges *s, uint64_t a);
void ranges_clear(struct ranges *s);
void ranges_free(struct ranges *s);

#endif
