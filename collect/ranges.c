#include "ranges.h"

#include <err.h>
#include <stdlib.h>

#include "grow.h"

void
ranges_add(struct ranges *s, uint64_t start, uint64_t end)
{
	size_t i = 0, j;
	if (end <= start)
		return;
	/* Keep the ranges that do not overlap, in order, then slot the new one in. */
	for (j = 0; j < s->n; j++)
		if (s->r[j].end <= start || s->r[j].start >= end)
			s->r[i++] = s->r[j];
	s->n = i;
	if (grow_array((void **)&s->r, &s->cap, s->n, 1, sizeof(*s->r)) < 0)
		errx(1, "out of memory");
	for (i = s->n; i > 0 && s->r[i - 1].start > start; i--)
		s->r[i] = s->r[i - 1];
	s->r[i] = (struct range){ start, end };
	s->n++;
}

int
ranges_has(const struct ranges *s, uint64_t a)
{
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a < s->r[mid].start)
			hi = mid;
		else if (a >= s->r[mid].end)
			lo = mid + 1;
		else
			return 1;
	}
	return 0;
}

void
ranges_clear(struct ranges *s)
{
	s->n = 0;
}

void
ranges_free(struct ranges *s)
{
	free(s->r);
	*s = (struct ranges){ 0 };
}
