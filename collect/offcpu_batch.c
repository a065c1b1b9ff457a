#include "offcpu_batch.h"

#include <err.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"

static size_t
hash(const struct batch_key *k)
{
	uint64_t h = (uint64_t)k->tid * 0x9E3779B97F4A7C15u;
	h ^= ((uint64_t)(uint32_t)k->kstack << 32 | (uint32_t)k->ustack) * 0xC2B2AE3D27D4EB4Fu;
	h ^= ((uint64_t)k->cpu << 8 | k->phase) * 0x165667B19E3779F9u;
	return (size_t)(h ^ h >> 29);
}

static int
same(const struct batch_key *a, const struct batch_key *b)
{
	return a->tid == b->tid && a->pid == b->pid && a->cpu == b->cpu &&
	       a->phase == b->phase && a->kstack == b->kstack && a->ustack == b->ustack;
}

/* The hash slot of k: its group's, or the empty one where it goes. */
static uint32_t *
slot_of(struct batches *b, const struct batch_key *k)
{
	for (size_t i = hash(k) & (b->cap - 1);; i = (i + 1) & (b->cap - 1)) {
		uint32_t *s = &b->slots[i];
		if (!*s || same(&b->keys[*s - 1], k))
			return s;
	}
}

static void
rehash(struct batches *b)
{
	size_t cap = b->cap ? b->cap * 2 : 256;
	free(b->slots);
	b->slots = calloc(cap, sizeof(*b->slots));
	if (!b->slots)
		errx(1, "out of memory");
	b->cap = cap;
	for (size_t g = 0; g < b->ngroups; g++)
		*slot_of(b, &b->keys[g]) = (uint32_t)g + 1;
}

int
batch_add(struct batches *b, const struct batch_key *k, const struct offcpu_span *s,
	  const void *top)
{
	b->pieces.extra_bytes = BATCH_TOP_WORDS * 8;
	if (2 * (b->ngroups + 1) > b->cap)
		rehash(b);
	uint32_t *slot = slot_of(b, k);
	if (!*slot) {
		if (grow_array((void **)&b->keys, &b->cap_groups, b->ngroups, 1, sizeof(*b->keys)) <
		    0)
			errx(1, "out of memory");
		b->keys[b->ngroups++] = *k;
		*slot = (uint32_t)b->ngroups;
	}
	/* Packed as the frame carries them: little-endian, which is the host's here. */
	if (spanbatch_add(&b->pieces, *slot - 1, s, top) < 0)
		errx(1, "out of memory");
	return b->pieces.n >= BATCH_MAX_PIECES;
}

struct flush_ctx {
	struct batches *b;
	void (*put)(void *arg, const struct batch_key *k, const uint8_t *spans,
		    const uint8_t *top, uint32_t n);
	void *arg;
};

static int
put_one(void *arg, uint32_t group, const uint8_t *spans, const uint8_t *top, uint32_t n)
{
	struct flush_ctx *c = arg;
	c->put(c->arg, &c->b->keys[group], spans, top, n);
	return 0;
}

void
batch_flush(struct batches *b,
	    void (*put)(void *arg, const struct batch_key *k, const uint8_t *spans,
			const uint8_t *top, uint32_t n),
	    void *arg)
{
	struct flush_ctx c = { b, put, arg };
	if (spanbatch_flush(&b->pieces, b->ngroups, put_one, &c) < 0)
		errx(1, "out of memory");
	if (b->slots)
		memset(b->slots, 0, b->cap * sizeof(*b->slots));
	b->ngroups = 0;
}

void
batch_release(struct batches *b)
{
	free(b->slots);
	free(b->keys);
	spanbatch_release(&b->pieces);
	memset(b, 0, sizeof(*b));
}
