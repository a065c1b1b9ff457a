#include "stackset.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"

uint64_t
stack_key_hash(uint32_t pid, uint32_t tid, const uint32_t *locs, uint16_t n)
{
	/* The seed aggregate has always used: the order of its window stacks follows it. */
	uint64_t h = 1469598103934665603ull;
	uint32_t head[3] = { pid, tid, n };

	for (int i = 0; i < 3; i++)
		h = (h ^ head[i]) * 0x100000001b3ull;
	for (unsigned i = 0; i < n; i++)
		h = (h ^ locs[i]) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

static int
same(const struct stackset *s, uint32_t off, const uint32_t *k, size_t n)
{
	const uint32_t *w = s->words + off;

	return w[2] == k[2] && memcmp(w, k, n * sizeof(*k)) == 0;
}

/* Doubles the table (kept at most half full) and puts every key back. */
static int
rehash(struct stackset *s)
{
	size_t n = s->nslots ? s->nslots * 2 : 1024, mask = n - 1;
	struct stackset_slot *t = calloc(n, sizeof(*t));

	if (!t)
		return -1;
	for (size_t i = 0; i < s->nslots; i++) {
		size_t j = s->slots[i].hash & mask;

		if (!s->slots[i].off)
			continue;
		while (t[j].off)
			j = (j + 1) & mask;
		t[j] = s->slots[i];
	}
	free(s->slots);
	s->slots = t;
	s->nslots = n;
	return 0;
}

int
stackset_add(struct stackset *s, uint32_t pid, uint32_t tid, const uint32_t *locs,
	     uint16_t nlocs)
{
	size_t n = 3 + (size_t)nlocs, j;
	uint32_t *k;
	uint64_t h;

	if ((s->count + 1) * 2 > s->nslots && rehash(s) < 0)
		return -1;
	if (grow_array((void **)&s->words, &s->capwords, s->nwords, n, sizeof(*s->words)) < 0 ||
	    s->nwords + n >= UINT32_MAX)
		return -1;
	/* The key is built where it would be stored: a duplicate just does not keep it. */
	k = s->words + s->nwords;
	k[0] = pid;
	k[1] = tid;
	k[2] = nlocs;
	/* An empty stack may come with no array at all: memcpy wants a pointer even for 0. */
	if (nlocs)
		memcpy(k + 3, locs, (size_t)nlocs * sizeof(*locs));
	h = stack_key_hash(pid, tid, locs, nlocs);
	for (j = h & (s->nslots - 1); s->slots[j].off; j = (j + 1) & (s->nslots - 1))
		if (s->slots[j].hash == h && same(s, s->slots[j].off - 1, k, n))
			return 0;
	s->slots[j] = (struct stackset_slot){ h, (uint32_t)s->nwords + 1 };
	s->nwords += n;
	s->count++;
	return 1;
}

void
stackset_clear(struct stackset *s)
{
	if (s->count && s->slots)
		memset(s->slots, 0, s->nslots * sizeof(*s->slots));
	s->count = 0;
	s->nwords = 0;
}

void
stackset_release(struct stackset *s)
{
	free(s->words);
	free(s->slots);
	memset(s, 0, sizeof(*s));
}
