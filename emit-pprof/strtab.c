#include "strtab.h"

#include <stdlib.h>
#include <string.h>

int
strtab_init(struct strtab *t)
{
	memset(t, 0, sizeof(*t));
	pb_init(&t->enc);
	return strtab_reset(t);
}

void
strtab_release(struct strtab *t)
{
	pb_release(&t->enc);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

/* FNV-1a, then a final mix so the low bits used for the slot depend on every byte. */
static uint64_t
hash_bytes(const char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ (uint8_t)p[i]) * 0x100000001b3ull;
	return h ^ (h >> 29);
}

static void
place(struct strtab *t, struct strtab_slot s)
{
	size_t i = s.hash & t->mask;

	while (t->slots[i].idx1)
		i = (i + 1) & t->mask;
	t->slots[i] = s;
}

static int
grow(struct strtab *t)
{
	size_t cap = t->slots ? (t->mask + 1) * 2 : 256, i, omask = t->mask;
	struct strtab_slot *old = t->slots;

	if (!(t->slots = calloc(cap, sizeof(*t->slots)))) {
		t->slots = old;
		return -1;
	}
	t->mask = cap - 1;
	for (i = 0; old && i <= omask; i++)
		if (old[i].idx1)
			place(t, old[i]);
	free(old);
	return 0;
}

int
strtab_reset(struct strtab *t)
{
	pb_reset(&t->enc);
	if (t->slots)
		memset(t->slots, 0, (t->mask + 1) * sizeof(*t->slots));
	t->count = 0;
	return strtab_add(t, "", 0) == 0 ? 0 : -1;
}

int64_t
strtab_add(struct strtab *t, const char *p, size_t n)
{
	uint64_t h = hash_bytes(p, n);
	size_t i;
	struct strtab_slot s;

	if (n > UINT32_MAX)
		return -1;
	for (i = t->slots ? h & t->mask : 0; t->slots && t->slots[i].idx1;
	     i = (i + 1) & t->mask) {
		s = t->slots[i];
		if (s.hash == h && s.len == n && memcmp(t->enc.buf + s.off, p, n) == 0)
			return s.idx1 - 1;
	}
	if ((!t->slots || (t->count + 1) * 2 > t->mask + 1) && grow(t) < 0)
		return -1;
	pb_tag(&t->enc, 6, PB_LEN);
	pb_varint(&t->enc, n);
	s = (struct strtab_slot){ .hash = h, .off = t->enc.len, .len = (uint32_t)n,
				  .idx1 = (uint32_t)t->count + 1 };
	pb_raw(&t->enc, p, n);
	if (pb_failed(&t->enc))
		return -1;
	place(t, s);
	return t->count++;
}
