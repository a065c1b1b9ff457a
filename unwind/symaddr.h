/* symaddr: a bucket index over an address-sorted array, so a lookup binary-searches a few
 * entries instead of the whole array.
 *
 * With 100,000 random addresses over a multi-megabyte line table, plain binary search spends
 * its time in cache misses (one per level).  Buckets of 2^shift bytes of address space each
 * record the first entry starting at or above the bucket, which takes a lookup straight to
 * the handful of entries that can hold it: about one miss instead of twenty.
 */
#ifndef RP_SYMADDR_H
#define RP_SYMADDR_H

#include <stddef.h>
#include <stdint.h>

struct addrix {
	uint64_t base;		/* key of the first entry */
	unsigned shift;		/* bucket size is 1 << shift bytes */
	uint32_t *start;	/* nb + 1 entries */
	size_t nb;
};

/* Builds the index over n entries of stride bytes whose first 8 bytes are a uint64_t key,
 * sorted ascending.  Returns 0, or -1 when out of memory (the index is then empty and
 * addrix_floor falls back to a plain binary search). */
int addrix_build(struct addrix *, const void *entries, size_t n, size_t stride);
/* Index of the last entry whose key is <= addr, or -1. */
int64_t addrix_floor(const struct addrix *, const void *entries, size_t n, size_t stride,
		     uint64_t addr);
void addrix_free(struct addrix *);

#endif
