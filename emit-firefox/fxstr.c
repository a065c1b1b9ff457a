#include "fxstr.h"

#include <stdlib.h>
#include <string.h>

void
fxstr_init(struct fxstr *s)
{
	memset(s, 0, sizeof(*s));
}

void
fxstr_release(struct fxstr *s)
{
	free(s->pool);
	free(s->off);
	free(s->len);
	free(s->slots);
	fxstr_init(s);
}

void
fxstr_clear(struct fxstr *s)
{
	s->pool_len = 0;
	s->n = 0;
	if (s->slots)
		memset(s->slots, 0, (s->mask + 1) * sizeof(*s->slots));
}

static uint64_t
hash(const char *p, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;     /* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)p[i]) * 0x100000001b3ull;
	return h;
}

static int
rehash(struct fxstr *s)
{
	size_t cap = s->slots ? 2 * (s->mask + 1) : 1024;
	uint32_t *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -1;
	for (size_t i = 0; i < s->n; i++) {
		size_t k = hash(s->pool + s->off[i], s->len[i]) & (cap - 1);
		while (slots[k])
			k = (k + 1) & (cap - 1);
		slots[k] = (uint32_t)i + 1;
	}
	free(s->slots);
	s->slots = slots;
	s->mask = cap - 1;
	return 0;
}

/* Room for one more string of len bytes. */
static int
reserve(struct fxstr *s, size_t len)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 1024;
		size_t *off = realloc(s->off, cap * sizeof(*off));
		if (!off)
			return -1;
		s->off = off;
		uint32_t *l = realloc(s->len, cap * sizeof(*l));
		if (!l)
			return -1;
		s->len = l;
		s->cap = cap;
	}
	if (s->pool_len + len > s->pool_cap) {
		size_t cap = s->pool_cap ? s->pool_cap : 1 << 16;
		while (cap < s->pool_len + len)
			cap *= 2;
		char *p = realloc(s->pool, cap);
		if (!p)
			return -1;
		s->pool = p;
		s->pool_cap = cap;
	}
	if (!s->slots || 2 * (s->n + 1) > s->mask + 1)
		return rehash(s);
	return 0;
}

int32_t
fxstr_intern(struct fxstr *s, const char *p, size_t len)
{
	size_t k;

	if (len > UINT32_MAX || s->n >= INT32_MAX || reserve(s, len) < 0)
		return -1;
	for (k = hash(p, len) & s->mask; s->slots[k]; k = (k + 1) & s->mask) {
		size_t i = s->slots[k] - 1;
		if (s->len[i] == len && (!len || !memcmp(s->pool + s->off[i], p, len)))
			return (int32_t)i;
	}
	if (len)
		memcpy(s->pool + s->pool_len, p, len);
	s->off[s->n] = s->pool_len;
	s->len[s->n] = (uint32_t)len;
	s->pool_len += len;
	s->slots[k] = (uint32_t)s->n + 1;
	return (int32_t)s->n++;
}

int32_t
fxstr_cstr(struct fxstr *s, const char *p)
{
	return fxstr_intern(s, p, strlen(p));
}
