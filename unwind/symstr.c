/* symstr: string interning for module indexes (see symstr.h). */
#include "symstr.h"

#include <stdlib.h>
#include <string.h>

#define CHUNK_SIZE (64u * 1024)	/* large enough that malloc overhead is noise */

struct strchunk {
	struct strchunk *next;
	size_t used, size;
	char data[];
};

void strpool_init(struct strpool *p)
{
	memset(p, 0, sizeof(*p));
}

static uint32_t hash_bytes(const char *s, size_t len)
{
	uint32_t h = 2166136261u;	/* FNV-1a: short keys, good enough spread */

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h ? h : 1;		/* 0 marks an empty slot */
}

static char *pool_alloc(struct strpool *p, size_t n)
{
	struct strchunk *c = p->chunks;

	if (!c || c->size - c->used < n) {
		size_t size = n > CHUNK_SIZE ? n : CHUNK_SIZE;

		if (!(c = malloc(sizeof(*c) + size)))
			return NULL;
		c->used = 0;
		c->size = size;
		c->next = p->chunks;
		p->chunks = c;
	}
	c->used += n;
	return c->data + c->used - n;
}

static int pool_grow(struct strpool *p)
{
	size_t n = p->nslots ? p->nslots * 2 : 1024;
	const char **slots = calloc(n, sizeof(*slots));
	uint32_t *hashes = calloc(n, sizeof(*hashes));

	if (!slots || !hashes) {
		free(slots);
		free(hashes);
		return -1;
	}
	for (size_t i = 0; i < p->nslots; i++) {
		if (!p->hashes[i])
			continue;
		size_t j = p->hashes[i] & (n - 1);
		while (hashes[j])
			j = (j + 1) & (n - 1);
		hashes[j] = p->hashes[i];
		slots[j] = p->slots[i];
	}
	free(p->slots);
	free(p->hashes);
	p->slots = slots;
	p->hashes = hashes;
	p->nslots = n;
	return 0;
}

const char *strpool_intern(struct strpool *p, const char *s, size_t len)
{
	if ((p->nused + 1) * 4 >= p->nslots * 3 && pool_grow(p) < 0)
		return NULL;

	uint32_t h = hash_bytes(s, len);
	size_t mask = p->nslots - 1, i = h & mask;

	for (; p->hashes[i]; i = (i + 1) & mask) {
		if (p->hashes[i] == h && strncmp(p->slots[i], s, len) == 0 &&
		    p->slots[i][len] == '\0')
			return p->slots[i];
	}
	char *copy = pool_alloc(p, len + 1);
	if (!copy)
		return NULL;
	memcpy(copy, s, len);
	copy[len] = '\0';
	p->hashes[i] = h;
	p->slots[i] = copy;
	p->nused++;
	return copy;
}

const char *strpool_cstr(struct strpool *p, const char *s)
{
	return s ? strpool_intern(p, s, strlen(s)) : NULL;
}

void strpool_free(struct strpool *p)
{
	if (!p)
		return;
	while (p->chunks) {
		struct strchunk *next = p->chunks->next;
		free(p->chunks);
		p->chunks = next;
	}
	free(p->slots);
	free(p->hashes);
	memset(p, 0, sizeof(*p));
}
