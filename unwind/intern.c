#include "intern.h"

#include <stdlib.h>
#include <string.h>

int
intern_init(struct intern *t)
{
	memset(t, 0, sizeof(*t));
	t->nslots = 4096;
	t->next_id = 1;
	t->slots = calloc(t->nslots, sizeof(*t->slots));
	return t->slots ? 0 : -1;
}

static uint64_t
mix(uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);
	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 29);
}

static uint64_t
hash_text(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

static int
grow(struct intern *t)
{
	size_t n = t->nslots * 2;
	struct intern_slot *s = calloc(n, sizeof(*s));
	if (!s)
		return -1;
	for (size_t i = 0; i < t->nslots; i++) {
		struct intern_slot *o = &t->slots[i];
		if (!o->id)
			continue;
		size_t j = (o->key ? o->a : mix(o->a, o->b)) & (n - 1);
		while (s[j].id)
			j = (j + 1) & (n - 1);
		s[j] = *o;
	}
	free(t->slots);
	t->slots = s;
	t->nslots = n;
	return 0;
}

uint32_t
intern_find(const struct intern *t, uint64_t a, uint64_t b)
{
	for (size_t j = mix(a, b) & (t->nslots - 1); t->slots[j].id; j = (j + 1) & (t->nslots - 1))
		if (!t->slots[j].key && t->slots[j].a == a && t->slots[j].b == b)
			return t->slots[j].id;
	return 0;
}

static uint32_t
insert(struct intern *t, size_t j, struct intern_slot s)
{
	s.id = t->next_id++;
	t->slots[j] = s;
	t->n++;
	if (t->n * 2 > t->nslots && grow(t) < 0)
		return 0;
	return s.id;
}

uint32_t
intern_new_id(struct intern *t)
{
	return t->next_id++;
}

uint32_t
intern_add(struct intern *t, uint64_t a, uint64_t b)
{
	size_t j = mix(a, b) & (t->nslots - 1);
	while (t->slots[j].id)
		j = (j + 1) & (t->nslots - 1);
	return insert(t, j, (struct intern_slot){ .a = a, .b = b });
}

uint32_t
intern_text(struct intern *t, const char *key, size_t len, int *is_new)
{
	uint64_t h = hash_text(key, len);
	size_t j = h & (t->nslots - 1);
	*is_new = 0;
	for (; t->slots[j].id; j = (j + 1) & (t->nslots - 1)) {
		struct intern_slot *s = &t->slots[j];
		if (s->key && s->a == h && s->b == len && memcmp(s->key, key, len) == 0)
			return s->id;
	}
	char *k = malloc(len ? len : 1);
	if (!k)
		return 0;
	memcpy(k, key, len);
	*is_new = 1;
	return insert(t, j, (struct intern_slot){ .a = h, .b = len, .key = k });
}

void
intern_release(struct intern *t)
{
	for (size_t i = 0; t->slots && i < t->nslots; i++)
		free(t->slots[i].key);
	free(t->slots);
	t->slots = NULL;
}
