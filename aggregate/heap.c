#include "heap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggout.h"
#include "stackset.h"
#include "stacktab.h"

int
heap_agg_init(struct heap_agg *h, size_t max_stacks)
{
	memset(h, 0, sizeof(*h));
	h->max_stacks = max_stacks;
	h->nslots = 1024;
	h->nbuckets = 4096;
	h->slots = calloc(h->nslots, sizeof(*h->slots));
	h->blocks = calloc(h->nbuckets, sizeof(*h->blocks));
	h->window = 1;
	return h->slots && h->blocks ? 0 : -1;
}

void
heap_agg_window(struct heap_agg *h, uint32_t index)
{
	if (h->window != index + 1) {
		h->window = index + 1;
		h->admitted = 0;
	}
}

/* Puts e into a table of n slots (a power of two, with room). */
static void
place(struct heap_entry **slots, size_t n, struct heap_entry *e)
{
	size_t j = e->hash & (n - 1);
	while (slots[j])
		j = (j + 1) & (n - 1);
	slots[j] = e;
}

/* The table again, keeping the entries keep() accepts (others are freed), with room for
 * twice as many. */
static int
rebuild(struct heap_agg *h, size_t nslots, int drop_idle)
{
	struct heap_entry **s = calloc(nslots, sizeof(*s));
	if (!s)
		return -1;
	size_t n = 0;
	for (size_t i = 0; i < h->nslots; i++) {
		struct heap_entry *e = h->slots[i];
		if (!e)
			continue;
		if (drop_idle && e->nlive == 0) {
			free(e);
			continue;
		}
		place(s, nslots, e);
		n++;
	}
	free(h->slots);
	h->slots = s;
	h->nslots = nslots;
	h->n = n;
	return 0;
}

struct heap_entry *
heap_agg_entry(struct heap_agg *h, uint32_t pid, uint32_t tid, const uint32_t *locs,
	       uint16_t nlocs)
{
	uint64_t hash = stack_key_hash(pid, tid, locs, nlocs);
	size_t j = hash & (h->nslots - 1);
	for (struct heap_entry *e; (e = h->slots[j]); j = (j + 1) & (h->nslots - 1))
		if (e->hash == hash && e->pid == pid && e->tid == tid && e->nlocs == nlocs &&
		    !memcmp(e->locs, locs, nlocs * sizeof(locs[0])))
			return e;
	struct heap_entry *e = calloc(1, sizeof(*e) + nlocs * sizeof(locs[0]));
	if (!e)
		return NULL;
	*e = (struct heap_entry){ .hash = hash, .pid = pid, .tid = tid, .nlocs = nlocs };
	memcpy(e->locs, locs, nlocs * sizeof(locs[0]));
	h->slots[j] = e;
	h->n++;
	/* Keep the load under one half so probes stay short. */
	if (h->n * 2 > h->nslots && rebuild(h, h->nslots * 2, 0) < 0)
		return NULL;
	return e;
}

static size_t
bucket(const struct heap_agg *h, uint32_t pid, uint64_t addr)
{
	uint64_t k = (addr ^ ((uint64_t)pid << 48)) * 0x9e3779b97f4a7c15ull;
	return (size_t)(k >> 32) & (h->nbuckets - 1);
}

/* The link that points at the block of (pid, addr), or at the NULL ending its chain. */
static struct heap_block **
block_at(struct heap_agg *h, uint32_t pid, uint64_t addr)
{
	struct heap_block **pp = &h->blocks[bucket(h, pid, addr)];
	while (*pp && ((*pp)->addr != addr || (*pp)->pid != pid))
		pp = &(*pp)->next;
	return pp;
}

/* Takes the block at *pp out: its stack's in-use values lose it (they held it, so they
 * never go below zero). */
static void
block_drop(struct heap_agg *h, struct heap_block **pp)
{
	struct heap_block *b = *pp;
	b->e->inuse_objects -= b->weight;
	b->e->inuse_space -= b->weight * b->size;
	b->e->nlive--;
	*pp = b->next;
	free(b);
	h->nblocks--;
	h->changes++;
}

/* Chains stay short: twice the buckets once there are twice as many blocks. */
static int
grow_buckets(struct heap_agg *h)
{
	size_t n = h->nbuckets * 2, old = h->nbuckets;
	struct heap_block **b = calloc(n, sizeof(*b)), **was = h->blocks;
	if (!b)
		return -1;
	h->blocks = b;
	h->nbuckets = n;
	for (size_t i = 0; i < old; i++)
		while (was[i]) {
			struct heap_block *x = was[i];
			was[i] = x->next;
			size_t j = bucket(h, x->pid, x->addr);
			x->next = b[j];
			b[j] = x;
		}
	free(was);
	return 0;
}

int
heap_agg_add(struct heap_agg *h, struct heap_entry *e, uint32_t pid, uint64_t addr,
	     uint64_t size, uint64_t weight, int track)
{
	if (e->admitted != h->window && h->admitted < h->max_stacks) {
		e->admitted = h->window;
		h->admitted++;
	}
	e->alloc_objects += weight;
	e->alloc_space += weight * size;
	if (!track)
		return 0;
	struct heap_block **pp = block_at(h, pid, addr);
	if (*pp)
		block_drop(h, pp); /* its free was lost: the address is taken again */
	if (h->nblocks >= HEAP_AGG_MAX_LIVE) {
		h->st.evictions++;
		return 0;
	}
	if (h->nblocks >= h->nbuckets * 2) {
		if (grow_buckets(h) < 0)
			return -1;
		pp = block_at(h, pid, addr);
	}
	struct heap_block *b = malloc(sizeof(*b));
	if (!b)
		return -1;
	*b = (struct heap_block){ *pp, addr, size, weight, pid, e };
	*pp = b;
	h->nblocks++;
	h->changes++;
	e->nlive++;
	e->inuse_objects += weight;
	e->inuse_space += weight * size;
	return 0;
}

int
heap_agg_drop(struct heap_agg *h, uint32_t pid, uint64_t addr)
{
	struct heap_block **pp = block_at(h, pid, addr);
	if (!*pp)
		return 0;
	block_drop(h, pp);
	return 1;
}

static int
on_alloc(struct heap_agg *h, const struct fr_heap_stack *s)
{
	struct heap_entry *e = heap_agg_entry(h, s->pid, s->tid, s->locs, s->nlocs);
	if (!e)
		return -1;
	h->st.samples++;
	h->st.usable += !!(s->stack_flags & STACK_USABLE);
	h->st.unusable += !(s->stack_flags & STACK_USABLE);
	return heap_agg_add(h, e, s->pid, s->addr, s->size, s->weight,
			    !(s->flags & ALLOC_UNTRACKED));
}

static void
on_free(struct heap_agg *h, const struct fr_heap_free *f)
{
	struct heap_block **pp = block_at(h, f->pid, f->addr);
	if (!*pp) {
		h->st.unmatched++;
		return;
	}
	if (!f->new_addr) {
		h->st.frees++;
		block_drop(h, pp);
		return;
	}
	h->st.moves++;
	if (f->new_addr == f->addr)
		return;
	struct heap_block *b = *pp;
	*pp = b->next;
	struct heap_block **to = block_at(h, f->pid, f->new_addr);
	if (*to)
		block_drop(h, to); /* a block whose free was lost held the new address */
	b->addr = f->new_addr;
	b->next = *to;
	*to = b;
}

void
heap_agg_gone(struct heap_agg *h, uint32_t pid)
{
	/* The stacks say whether pid holds a block: most processes that end hold none, and
	 * the blocks are not looked through for them. */
	size_t i = 0;
	while (i < h->nslots && !(h->slots[i] && h->slots[i]->pid == pid && h->slots[i]->nlive))
		i++;
	if (i == h->nslots)
		return;
	for (i = 0; i < h->nbuckets; i++)
		for (struct heap_block **pp = &h->blocks[i]; *pp;)
			if ((*pp)->pid == pid)
				block_drop(h, pp);
			else
				pp = &(*pp)->next;
}

static void
on_reset(struct heap_agg *h, uint32_t pid)
{
	h->st.resets++;
	heap_agg_gone(h, pid);
}

int
heap_agg_frame(struct heap_agg *h, const struct frame *f, char *err, size_t errlen)
{
	static union {
		struct fr_heap_stack s;
		struct fr_heap_free f;
		struct fr_heap_reset r;
	} u;
	if (f->type == FR_HEAP_STACK) {
		if (stream_get_heap_stack(f, &u.s, err, errlen) < 0)
			return -1;
		if (on_alloc(h, &u.s) < 0) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
	} else if (f->type == FR_HEAP_FREE) {
		if (stream_get_heap_free(f, &u.f, err, errlen) < 0)
			return -1;
		on_free(h, &u.f);
	} else if (f->type == FR_HEAP_RESET) {
		if (stream_get_heap_reset(f, &u.r, err, errlen) < 0)
			return -1;
		on_reset(h, u.r.pid);
	}
	return 0;
}

int
heap_agg_lost(struct heap_agg *h, const struct fr_lost *l)
{
	uint64_t *c = l->kind == LOST_HEAP_RING ? &h->st.ring_drops :
		      l->kind == LOST_HEAP_EVICTED ? &h->st.evictions :
		      l->kind == LOST_HEAP_UNFINISHED ? &h->st.unfinished :
		      l->kind == LOST_HEAP_STACK ? &h->st.stack_errors : NULL;
	if (c)
		*c += l->count;
	return c != NULL;
}

int
heap_agg_each(struct heap_agg *h, heap_agg_put_fn *put, void *arg)
{
	for (size_t i = 0; i < h->nslots; i++) {
		struct heap_entry *e = h->slots[i];
		if (!e || (!e->alloc_objects && !e->nlive))
			continue;
		if (e->admitted != h->window && h->admitted < h->max_stacks) {
			e->admitted = h->window;
			h->admitted++;
		}
		if (put(arg, e, e->admitted == h->window) < 0)
			return -1;
	}
	return 0;
}

struct heap_put {
	struct heap_agg *h;
	struct stream_writer *out;
	uint32_t index;
};

/* One stack of the window: written, or counted as left out by the stack cap. */
static int
put_stack(void *arg, const struct heap_entry *e, int admitted)
{
	static struct fr_window_heap_stack ws;
	struct heap_put *hp = arg;
	struct heap_stats *st = &hp->h->st;
	if (!admitted) {
		st->dropped_alloc_objects += e->alloc_objects;
		st->dropped_alloc_space += e->alloc_space;
		st->dropped_inuse_objects += e->inuse_objects;
		st->dropped_inuse_space += e->inuse_space;
		return 0;
	}
	ws = (struct fr_window_heap_stack){ .index = hp->index, .pid = e->pid, .tid = e->tid,
		.alloc_objects = e->alloc_objects, .alloc_space = e->alloc_space,
		.inuse_objects = e->inuse_objects, .inuse_space = e->inuse_space,
		.nlocs = e->nlocs };
	memcpy(ws.locs, e->locs, e->nlocs * sizeof(e->locs[0]));
	st->alloc_objects += e->alloc_objects;
	st->alloc_space += e->alloc_space;
	st->inuse_objects += e->inuse_objects;
	st->inuse_space += e->inuse_space;
	st->distinct++;
	return stream_put_window_heap_stack(hp->out, &ws);
}

int
heap_agg_put(struct heap_agg *h, struct stream_writer *out, uint32_t index, uint64_t start)
{
	struct heap_put hp = { h, out, index };
	heap_agg_window(h, index);
	if (heap_agg_each(h, put_stack, &hp) < 0)
		return -1;
	const struct heap_stats *st = &h->st;
	if (!st->dropped_alloc_objects && !st->dropped_inuse_objects)
		return 0;
	return agg_warning(out, start, "heap stack cap of %zu distinct stacks reached: "
			   "%llu allocations (%llu bytes) and %llu live (%llu bytes) omitted",
			   h->max_stacks, (unsigned long long)st->dropped_alloc_objects,
			   (unsigned long long)st->dropped_alloc_space,
			   (unsigned long long)st->dropped_inuse_objects,
			   (unsigned long long)st->dropped_inuse_space);
}

#define STAT AGG_STAT

uint16_t
heap_agg_stats(const struct heap_agg *h, struct fr_stat *stats, uint16_t room)
{
	const struct heap_stats *s = &h->st;
	const struct fr_stat all[] = {
		STAT("heap.alloc_objects", s->alloc_objects),
		STAT("heap.alloc_space", s->alloc_space),
		STAT("heap.inuse_objects", s->inuse_objects),
		STAT("heap.inuse_space", s->inuse_space),
		STAT("heap.aggregation_dropped_alloc_objects", s->dropped_alloc_objects),
		STAT("heap.aggregation_dropped_alloc_space", s->dropped_alloc_space),
		STAT("heap.aggregation_dropped_inuse_objects", s->dropped_inuse_objects),
		STAT("heap.aggregation_dropped_inuse_space", s->dropped_inuse_space),
		STAT("heap.samples", s->samples),
		STAT("heap.frees", s->frees),
		STAT("heap.moves", s->moves),
		STAT("heap.unmatched_frees", s->unmatched),
		STAT("heap.live_samples", h->nblocks),
		STAT("heap.ring_buffer_drops", s->ring_drops),
		STAT("heap.live_evictions", s->evictions),
		STAT("heap.unfinished_returns", s->unfinished),
		STAT("heap.stack_failures", s->stack_errors),
		STAT("heap.usable_stacks", s->usable),
		STAT("heap.unusable_stacks", s->unusable),
		STAT("heap.distinct_stacks", s->distinct),
		STAT("heap.max_stacks", h->max_stacks),
		STAT("heap.resets", s->resets),
	};
	return agg_copy_stats(all, sizeof(all) / sizeof(all[0]), stats, room);
}

/* The next window: allocations restart, stacks without live blocks go. */
int
heap_agg_next(struct heap_agg *h)
{
	for (size_t i = 0; i < h->nslots; i++)
		if (h->slots[i])
			h->slots[i]->alloc_objects = h->slots[i]->alloc_space = 0;
	memset(&h->st, 0, sizeof(h->st));
	size_t n = 1024;
	while (n < h->n * 4)
		n *= 2;
	return rebuild(h, n, 1);
}

void
heap_agg_release(struct heap_agg *h)
{
	for (size_t i = 0; h->blocks && i < h->nbuckets; i++)
		while (h->blocks[i]) {
			struct heap_block *b = h->blocks[i];
			h->blocks[i] = b->next;
			free(b);
		}
	for (size_t i = 0; h->slots && i < h->nslots; i++)
		free(h->slots[i]);
	free(h->slots);
	free(h->blocks);
	memset(h, 0, sizeof(*h));
}
