/*
 * Open-addressing hash map from 64-bit keys to 32-bit values, used to renumber stream ids
 * (mappings, functions, locations, thread ids) into dense indices.  Linear probing, load
 * factor at most 1/2, no deletion: a window's tables are cleared whole.
 */
#ifndef RP_IDMAP_H
#define RP_IDMAP_H

#include <stddef.h>
#include <stdint.h>

struct idmap_slot {
	uint64_t key;
	uint32_t val;
	uint32_t used;
};

struct idmap {
	struct idmap_slot *slots;
	size_t mask;            /* capacity - 1; capacity is a power of two */
	size_t count;
};

void idmap_init(struct idmap *m);
void idmap_release(struct idmap *m);
/* Empties the map and keeps its memory. */
void idmap_clear(struct idmap *m);
/* 1 and *val when key is present, else 0. */
int idmap_get(const struct idmap *m, uint64_t key, uint32_t *val);
/* Sets key to val (replacing an old value); 0, or -1 when out of memory. */
int idmap_put(struct idmap *m, uint64_t key, uint32_t val);

#endif
