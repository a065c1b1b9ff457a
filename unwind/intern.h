/*
 * Ids for locations and functions: each distinct (mapping, address) and each distinct
 * function is written once as FR_LOCATION / FR_FUNCTION and referred to by id afterwards.
 */
#ifndef RP_INTERN_H
#define RP_INTERN_H

#include <stddef.h>
#include <stdint.h>

struct intern_slot {
	uint64_t a, b;      /* key words (locations), or hash (functions) */
	char *key;          /* function key text, NULL for locations */
	uint32_t id;
};

struct intern {
	struct intern_slot *slots;
	size_t nslots, n;
	uint32_t next_id;
};

int intern_init(struct intern *t);
/* The id stored for the numeric key, or 0. */
uint32_t intern_find(const struct intern *t, uint64_t a, uint64_t b);
/* A fresh id stored under no key (the caller keeps the key elsewhere). */
uint32_t intern_new_id(struct intern *t);
/* Stores a fresh id for the key and returns it; 0 when out of memory. */
uint32_t intern_add(struct intern *t, uint64_t a, uint64_t b);
/* Text keys (len bytes, may contain NULs): *is_new tells whether the id is fresh. */
uint32_t intern_text(struct intern *t, const char *key, size_t len, int *is_new);
void intern_release(struct intern *t);

#endif
