#include "delta.h"
#include "grow.h"

#include <stdlib.h>
#include <string.h>

static void
gen_release(struct delta_gen *g)
{
	free(g->e);
	free(g->locs);
	memset(g, 0, sizeof(*g));
}

void
delta_release(struct delta *d)
{
	gen_release(&d->prev);
	gen_release(&d->cur);
}

static const uint32_t *cmp_locs_a, *cmp_locs_b;        /* qsort and bsearch have no context */

static int
cmp_key(const struct delta_entry *x, const uint32_t *xl, const struct delta_entry *y,
	const uint32_t *yl)
{
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->nlocs != y->nlocs)
		return x->nlocs < y->nlocs ? -1 : 1;
	for (uint16_t i = 0; i < x->nlocs; i++)
		if (xl[x->locs + i] != yl[y->locs + i])
			return xl[x->locs + i] < yl[y->locs + i] ? -1 : 1;
	return 0;
}

static int
cmp_sort(const void *a, const void *b)
{
	return cmp_key(a, cmp_locs_a, b, cmp_locs_a);
}

/* bsearch's key lives in the current generation, the members in the previous one. */
static int
cmp_find(const void *key, const void *member)
{
	return cmp_key(key, cmp_locs_a, member, cmp_locs_b);
}

int
delta_take(struct delta *d, const struct wset *set)
{
	struct delta_gen *g = &d->cur;

	g->n = g->nlocs = 0;
	if (grow_array((void **)&g->e, &g->cap, 0, set->nstacks, sizeof(*g->e)) < 0 ||
	    grow_array((void **)&g->locs, &g->cap_locs, 0, set->nlocs, sizeof(*g->locs)) < 0) {
		strcpy(d->err, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < set->nstacks; i++) {
		const struct wstack *s = &set->stacks[i];

		g->e[g->n++] = (struct delta_entry){ s->pid, s->tid, s->nlocs, g->nlocs,
						     s->count, s->nanos, 0 };
		memcpy(g->locs + g->nlocs, set->locs + s->locs, s->nlocs * sizeof(*g->locs));
		g->nlocs += s->nlocs;
	}
	for (size_t i = 0; i < d->prev.n; i++)
		d->prev.e[i].seen = 0;
	return 0;
}

void
delta_prev(struct delta *d, const struct wset *set, const struct wstack *s, uint64_t *objects,
	   uint64_t *space)
{
	struct delta_entry key = { s->pid, s->tid, s->nlocs, s->locs, 0, 0, 0 };
	struct delta_entry *p = NULL;

	cmp_locs_a = set->locs;
	cmp_locs_b = d->prev.locs;
	if (d->prev.n)
		p = bsearch(&key, d->prev.e, d->prev.n, sizeof(*p), cmp_find);
	*objects = p ? p->inuse_objects : 0;
	*space = p ? p->inuse_space : 0;
	if (p)
		p->seen = 1;
}

void
delta_next(struct delta *d)
{
	struct delta_gen t = d->prev;

	d->prev = d->cur;
	d->cur = t;
	cmp_locs_a = d->prev.locs;
	if (d->prev.n)
		qsort(d->prev.e, d->prev.n, sizeof(*d->prev.e), cmp_sort);
}
