/*
 * The profile's string table (shared.stringArray): each distinct string once, numbered in
 * order of first use.  Strings are copied into one pool; a hash table finds repeats.
 */
#ifndef EF_FXSTR_H
#define EF_FXSTR_H

#include <stddef.h>
#include <stdint.h>

struct fxstr {
	char *pool;
	size_t pool_len, pool_cap;
	size_t *off;            /* start of string i in pool; its length is len[i] */
	uint32_t *len;
	size_t n, cap;
	uint32_t *slots;        /* string index + 1, 0 = empty; capacity mask + 1 */
	size_t mask;
};

void fxstr_init(struct fxstr *s);
void fxstr_release(struct fxstr *s);
/* Forgets every string and keeps the memory, for the next window. */
void fxstr_clear(struct fxstr *s);
/* The index of p[0..len), added if new; -1 when out of memory. */
int32_t fxstr_intern(struct fxstr *s, const char *p, size_t len);
int32_t fxstr_cstr(struct fxstr *s, const char *p);

static inline const char *
fxstr_at(const struct fxstr *s, size_t i, size_t *len)
{
	*len = s->len[i];
	return s->pool + s->off[i];
}

#endif
