/*
 * PERF_SAMPLE_READ values.  A sample that reads its group ({cycles,instructions}:S) carries
 * every member's running count; perf weighs each member's sample by the count's growth since
 * the same counter's previous sample (session.c, deliver_sample_value), so a member that
 * never samples on its own still gets a profile.  The previous value is kept per event id,
 * and per thread for an inherited counter, whose children count apart under the same id.
 */
#include <stdlib.h>

#include "import.h"

#define FLAG_INHERIT (1ull << 1)

static uint64_t
hash(uint64_t id, uint64_t tid)
{
	uint64_t h = (id ^ (tid << 32 | tid >> 32)) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 29);
}

static int
grow(struct imp *m)
{
	size_t cap = m->capreads ? 2 * m->capreads : 256;
	struct readval *v = calloc(cap, sizeof(*v));
	if (!v)
		return -1;
	for (size_t i = 0; i < m->capreads; i++) {
		struct readval *o = &m->reads[i];
		if (!o->used)
			continue;
		size_t j = hash(o->id, o->tid) & (cap - 1);
		while (v[j].used)
			j = (j + 1) & (cap - 1);
		v[j] = *o;
	}
	free(m->reads);
	m->reads = v;
	m->capreads = cap;
	return 0;
}

/* The growth of counter id since its previous value (the whole value the first time).  A
 * count that went down (a counter reset) weighs its new value. */
int
readval_delta(struct imp *m, const struct attr *a, uint64_t id, uint32_t tid, uint64_t value,
	      uint64_t *delta)
{
	uint64_t t = (a->flags & FLAG_INHERIT) ? tid : 0;
	if ((m->nreads + 1) * 2 > m->capreads && grow(m) < 0)
		return imp_fail(m, 0, "out of memory");
	size_t j = hash(id, t) & (m->capreads - 1);
	while (m->reads[j].used && (m->reads[j].id != id || m->reads[j].tid != t))
		j = (j + 1) & (m->capreads - 1);
	struct readval *r = &m->reads[j];
	if (!r->used) {
		*r = (struct readval){ id, t, 0, 1 };
		m->nreads++;
	}
	*delta = value >= r->value ? value - r->value : value;
	r->value = value;
	return 0;
}

void
readval_release(struct imp *m)
{
	free(m->reads);
	m->reads = NULL;
	m->nreads = m->capreads = 0;
}
