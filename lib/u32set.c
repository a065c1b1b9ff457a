#include "u32set.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"

size_t
u32set_find(const struct u32set *s, uint32_t id, int *found)
{
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->v[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < s->n && s->v[lo] == id;
	return lo;
}

int
u32set_has(const struct u32set *s, uint32_t id)
{
	int found;
	u32set_find(s, id, &found);
	return found;
}

int
u32set_add(struct u32set *s, uint32_t id)
{
	int found;
	size_t i = u32set_find(s, id, &found);
	if (found)
		return 0;
	if (grow_array((void **)&s->v, &s->cap, s->n, 1, sizeof(*s->v)) < 0)
		return -1;
	memmove(s->v + i + 1, s->v + i, (s->n - i) * sizeof(*s->v));
	s->v[i] = id;
	s->n++;
	return 0;
}

void
u32set_remove_at(struct u32set *s, size_t i)
{
	memmove(s->v + i, s->v + i + 1, (s->n - i - 1) * sizeof(*s->v));
	s->n--;
}

void
u32set_remove(struct u32set *s, uint32_t id)
{
	int found;
	size_t i = u32set_find(s, id, &found);
	if (found)
		u32set_remove_at(s, i);
}

void
u32set_free(struct u32set *s)
{
	free(s->v);
	*s = (struct u32set){ 0 };
}
