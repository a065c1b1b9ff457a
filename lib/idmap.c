#include "idmap.h"

#include <stdlib.h>
#include <string.h>

void
idmap_init(struct idmap *m)
{
	memset(m, 0, sizeof(*m));
}

void
idmap_release(struct idmap *m)
{
	free(m->slots);
	idmap_init(m);
}

void
idmap_clear(struct idmap *m)
{
	if (m->count)
		memset(m->slots, 0, (m->mask + 1) * sizeof(*m->slots));
	m->count = 0;
}

/* Fibonacci hashing: ids are often sequential, the multiply spreads them over the table. */
static size_t
slot_of(const struct idmap *m, uint64_t key)
{
	return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & m->mask;
}

int
idmap_get(const struct idmap *m, uint64_t key, uint32_t *val)
{
	size_t i;

	if (!m->slots)
		return 0;
	for (i = slot_of(m, key); m->slots[i].used; i = (i + 1) & m->mask) {
		if (m->slots[i].key == key) {
			*val = m->slots[i].val;
			return 1;
		}
	}
	return 0;
}

static void
insert(struct idmap *m, uint64_t key, uint32_t val)
{
	size_t i;

	for (i = slot_of(m, key); m->slots[i].used; i = (i + 1) & m->mask) {
		if (m->slots[i].key == key) {
			m->slots[i].val = val;
			return;
		}
	}
	m->slots[i] = (struct idmap_slot){ .key = key, .val = val, .used = 1 };
	m->count++;
}

static int
grow(struct idmap *m)
{
	size_t cap = m->slots ? (m->mask + 1) * 2 : 64, i;
	struct idmap old = *m;

	if (!(m->slots = calloc(cap, sizeof(*m->slots)))) {
		*m = old;
		return -1;
	}
	m->mask = cap - 1;
	m->count = 0;
	for (i = 0; old.slots && i <= old.mask; i++)
		if (old.slots[i].used)
			insert(m, old.slots[i].key, old.slots[i].val);
	free(old.slots);
	return 0;
}

int
idmap_put(struct idmap *m, uint64_t key, uint32_t val)
{
	if ((!m->slots || (m->count + 1) * 2 > m->mask + 1) && grow(m) < 0)
		return -1;
	insert(m, key, val);
	return 0;
}
