/* symaddr: bucketed search over sorted address arrays (see symaddr.h). */
#include "symaddr.h"

#include <stdlib.h>
#include <string.h>

static uint64_t key_at(const void *entries, size_t stride, size_t i)
{
	uint64_t k;

	memcpy(&k, (const char *)entries + i * stride, sizeof(k));
	return k;
}

int addrix_build(struct addrix *x, const void *entries, size_t n, size_t stride)
{
	memset(x, 0, sizeof(*x));
	if (n < 64 || n > UINT32_MAX)
		return 0;	/* small arrays: a binary search is already a few cache lines */
	uint64_t base = key_at(entries, stride, 0), span = key_at(entries, stride, n - 1) - base;
	unsigned shift = 0;

	while (shift < 63 && (span >> shift) >= n)	/* about one entry per bucket */
		shift++;
	size_t nb = (size_t)(span >> shift) + 1;
	if (!(x->start = malloc((nb + 1) * sizeof(*x->start))))
		return -1;
	size_t i = 0;
	for (size_t b = 0; b <= nb; b++) {
		uint64_t lo = b == nb ? UINT64_MAX : base + ((uint64_t)b << shift);
		while (i < n && key_at(entries, stride, i) < lo)
			i++;
		x->start[b] = (uint32_t)i;
	}
	x->base = base;
	x->shift = shift;
	x->nb = nb;
	return 0;
}

int64_t addrix_floor(const struct addrix *x, const void *entries, size_t n, size_t stride,
		     uint64_t addr)
{
	size_t lo = 0, hi = n;

	if (x->start) {
		if (addr < x->base)
			return -1;
		uint64_t b = (addr - x->base) >> x->shift;
		if (b >= x->nb)
			b = x->nb - 1;
		lo = x->start[b];	/* entries before lo are below addr's bucket */
		hi = x->start[b + 1];	/* entries from hi on are above it */
	}
	while (lo < hi) {	/* first entry above addr */
		size_t mid = lo + (hi - lo) / 2;
		if (key_at(entries, stride, mid) <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (int64_t)lo - 1;
}

void addrix_free(struct addrix *x)
{
	free(x->start);
	memset(x, 0, sizeof(*x));
}
