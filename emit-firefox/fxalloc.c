#include "fxalloc.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "stackset.h"

/* An allocation stack, shared by the tracked blocks allocated there. */
struct fxa_stack {
	struct fxa_stack *next;
	uint64_t hash;
	uint32_t pid, tid;
	uint64_t nlive;         /* tracked blocks: the stack goes with the last */
	uint16_t nlocs;
	uint32_t locs[];
};

struct fxa_block {
	struct fxa_block *next;
	uint64_t addr, bytes, id;
	uint32_t pid;
	struct fxa_stack *st;
};

void
fxalloc_init(struct fxalloc *a, uint64_t max)
{
	memset(a, 0, sizeof(*a));
	timeline_init(&a->tl, max);
	a->next_id = 1;
}

void
fxalloc_release(struct fxalloc *a)
{
	for (size_t i = 0; i < a->nbuckets; i++)
		for (struct fxa_block *b = a->blocks[i], *n; b; b = n) {
			n = b->next;
			free(b);
		}
	for (size_t i = 0; i < a->nsbuckets; i++)
		for (struct fxa_stack *s = a->stacks[i], *n; s; s = n) {
			n = s->next;
			free(s);
		}
	free(a->blocks);
	free(a->stacks);
	free(a->block);
	timeline_release(&a->tl);
	fxalloc_init(a, a->tl.max);
}

void
fxalloc_clear(struct fxalloc *a)
{
	timeline_clear(&a->tl);
	a->seen = 0;
}

static size_t
block_bucket(size_t n, uint32_t pid, uint64_t addr)
{
	uint64_t k = (addr ^ ((uint64_t)pid << 48)) * 0x9e3779b97f4a7c15ull;
	return (size_t)(k >> 32) & (n - 1);
}

/* Doubles a chained table of n buckets (0: creates 4096), rehashing with key(). */
#define REHASH(T, tab, n, key)                                                        \
	do {                                                                          \
		size_t n_ = (n) ? (n) * 2 : 4096;                                     \
		T **t_ = calloc(n_, sizeof(*t_));                                     \
		if (!t_)                                                              \
			return -1;                                                    \
		for (size_t i_ = 0; i_ < (n); i_++)                                   \
			for (T *x_ = (tab)[i_], *nx_; x_; x_ = nx_) {                 \
				nx_ = x_->next;                                       \
				size_t j_ = key(x_, n_);                              \
				x_->next = t_[j_];                                    \
				t_[j_] = x_;                                          \
			}                                                             \
		free(tab);                                                            \
		(tab) = t_;                                                           \
		(n) = n_;                                                             \
	} while (0)

#define BLOCK_KEY(b, n) block_bucket((n), (b)->pid, (b)->addr)
#define STACK_KEY(s, n) ((size_t)(s)->hash & ((n) - 1))

static int
grow_blocks(struct fxalloc *a)
{
	REHASH(struct fxa_block, a->blocks, a->nbuckets, BLOCK_KEY);
	return 0;
}

static int
grow_stacks(struct fxalloc *a)
{
	REHASH(struct fxa_stack, a->stacks, a->nsbuckets, STACK_KEY);
	return 0;
}

/* The link that points at the block of (pid, addr), or at the NULL ending its chain. */
static struct fxa_block **
block_at(struct fxalloc *a, uint32_t pid, uint64_t addr)
{
	struct fxa_block **pp = &a->blocks[block_bucket(a->nbuckets, pid, addr)];

	while (*pp && ((*pp)->addr != addr || (*pp)->pid != pid))
		pp = &(*pp)->next;
	return pp;
}

static struct fxa_stack *
stack_get(struct fxalloc *a, const struct fr_heap_stack *s)
{
	uint64_t hash = stack_key_hash(s->pid, s->tid, s->locs, s->nlocs);
	size_t bytes = s->nlocs * sizeof(s->locs[0]);
	struct fxa_stack *st;

	if (a->nstacks >= a->nsbuckets && grow_stacks(a) < 0)
		return NULL;
	for (st = a->stacks[hash & (a->nsbuckets - 1)]; st; st = st->next)
		if (st->hash == hash && st->pid == s->pid && st->tid == s->tid &&
		    st->nlocs == s->nlocs && !memcmp(st->locs, s->locs, bytes))
			return st;
	if (!(st = malloc(sizeof(*st) + bytes)))
		return NULL;
	*st = (struct fxa_stack){ .hash = hash, .pid = s->pid, .tid = s->tid,
				  .nlocs = s->nlocs };
	memcpy(st->locs, s->locs, bytes);
	st->next = a->stacks[hash & (a->nsbuckets - 1)];
	a->stacks[hash & (a->nsbuckets - 1)] = st;
	a->nstacks++;
	return st;
}

/* The stack loses a block; the last one takes it out of its chain. */
static void
stack_put(struct fxalloc *a, struct fxa_stack *st)
{
	if (--st->nlive)
		return;
	struct fxa_stack **pp = &a->stacks[st->hash & (a->nsbuckets - 1)];
	while (*pp != st)
		pp = &(*pp)->next;
	*pp = st->next;
	free(st);
	a->nstacks--;
}

static void
block_drop(struct fxalloc *a, struct fxa_block **pp)
{
	struct fxa_block *b = *pp;

	*pp = b->next;
	stack_put(a, b->st);
	free(b);
	a->nblocks--;
}

/* Keeps an entry of the window (the timeline counts it as dropped when full). */
static int
entry(struct fxalloc *a, const struct tl_sample *v, uint64_t id, const uint32_t *locs,
      uint16_t nlocs)
{
	size_t n = a->tl.n;

	a->seen = 1;
	if (timeline_add_entry(&a->tl, v, locs, nlocs) < 0)
		return -1;
	if (a->tl.n == n)
		return 0;
	if (grow_array((void **)&a->block, &a->cap_block, n, 1, sizeof(*a->block)) < 0)
		return -1;
	a->block[n] = id;
	return 0;
}

/* Tracks the block of s under number id (unless the table is full: then its free will
 * not show). */
static int
track(struct fxalloc *a, const struct fr_heap_stack *s, uint64_t bytes, uint64_t id)
{
	if (a->nblocks >= a->nbuckets * 2 && grow_blocks(a) < 0)
		return -1;
	struct fxa_block **pp = block_at(a, s->pid, s->addr);
	if (*pp)
		block_drop(a, pp); /* its free was lost: the address is taken again */
	if (a->nblocks >= FXA_MAX_LIVE)
		return 0;
	struct fxa_stack *st = stack_get(a, s);
	struct fxa_block *b = malloc(sizeof(*b));
	if (!st || !b) {
		free(b);
		return -1;
	}
	st->nlive++;
	*b = (struct fxa_block){ *pp, s->addr, bytes, id, s->pid, st };
	*pp = b;
	a->nblocks++;
	return 0;
}

int
fxalloc_stack(struct fxalloc *a, const struct fr_heap_stack *s)
{
	uint64_t bytes = s->weight * s->size, id = a->next_id++;
	struct tl_sample v = { .time = s->time, .period = bytes, .pid = s->pid, .tid = s->tid,
			       .flags = s->stack_flags & ~(TL_OFFCPU | TL_FREE) };

	if (entry(a, &v, id, s->locs, s->nlocs) < 0)
		return -1;
	return s->flags & ALLOC_UNTRACKED ? 0 : track(a, s, bytes, id);
}

int
fxalloc_free(struct fxalloc *a, const struct fr_heap_free *f)
{
	if (!a->nbuckets)
		return 0;
	struct fxa_block **pp = block_at(a, f->pid, f->addr), *b = *pp;
	if (!b)
		return 0; /* never sampled, or forgotten by a reset */
	if (f->new_addr) {
		/* A realloc moved it: same number, stack and bytes at the new address. */
		*pp = b->next;
		b->addr = f->new_addr;
		struct fxa_block **to = block_at(a, f->pid, f->new_addr);
		if (*to)
			block_drop(a, to);
		b->next = *to;
		*to = b;
		return 0;
	}
	struct tl_sample v = { .time = f->time, .period = b->bytes, .pid = f->pid, .tid = f->tid,
			       .flags = TL_FREE };
	int r = entry(a, &v, b->id, b->st->locs, b->st->nlocs);
	block_drop(a, pp);
	return r;
}

void
fxalloc_reset(struct fxalloc *a, uint32_t pid)
{
	a->seen = 1;
	for (size_t i = 0; i < a->nbuckets; i++) {
		struct fxa_block **pp = &a->blocks[i];
		while (*pp) {
			if ((*pp)->pid == pid)
				block_drop(a, pp);
			else
				pp = &(*pp)->next;
		}
	}
}

void
fxalloc_drop_before(struct fxalloc *a, uint64_t t)
{
	size_t n = 0;

	for (size_t i = 0; i < a->tl.n; i++) {
		if (a->tl.s[i].time < t)
			continue;
		a->tl.s[n] = a->tl.s[i];
		a->block[n++] = a->block[i];
	}
	a->tl.n = n;
}
