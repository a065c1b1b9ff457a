/* pins: the mappings in-use memory names (see pins.h). */
#include "pins.h"

#include <string.h>

/* Fewer forgotten locations than this are not worth a pass over the map. */
#define PINS_MIN_SWEEP 1024

void
pins_init(struct pins *p)
{
	memset(p, 0, sizeof(*p));
	idmap_init(&p->loc);
	idmap_init(&p->nlocs);
	idmap_init(&p->dead);
	idmap_init(&p->named);
}

void
pins_release(struct pins *p)
{
	idmap_release(&p->loc);
	idmap_release(&p->nlocs);
	idmap_release(&p->dead);
	idmap_release(&p->named);
}

int
pins_location(struct pins *p, const struct fr_location *l)
{
	uint32_t n = 0, old;

	/* A location is defined once (the stream's rule); a repeat changes nothing here. */
	if (idmap_get(&p->loc, l->id, &old))
		return 0;
	idmap_get(&p->nlocs, l->mapping_id, &n);
	return idmap_put(&p->loc, l->id, l->mapping_id) < 0 ||
			       idmap_put(&p->nlocs, l->mapping_id, n + 1) < 0 ?
		       -1 :
		       0;
}

int
pins_gather(struct pins *p, const struct heap_agg *const *tables, size_t n)
{
	uint32_t m;
	uint64_t changes = 1;

	for (size_t t = 0; t < n; t++)
		changes += tables[t]->changes;
	if (changes == p->gathered)
		return 0;
	idmap_clear(&p->named);
	p->gathered = 0;	/* until it is whole */
	for (size_t t = 0; t < n; t++) {
		const struct heap_agg *h = tables[t];
		for (size_t i = 0; i < h->nslots; i++) {
			const struct heap_entry *e = h->slots[i];
			if (!e || !e->nlive)
				continue;
			for (uint16_t k = 0; k < e->nlocs; k++)
				if (idmap_get(&p->loc, e->locs[k], &m) && idmap_put(&p->named, m, 1) < 0)
					return -1;
		}
	}
	p->gathered = changes;
	return 0;
}

/* Keeps the entries of *m for which keep(arg, entry) holds. */
static int
filter(struct idmap *m, int (*keep)(const struct pins *, const struct idmap_slot *),
       const struct pins *p)
{
	struct idmap out;

	idmap_init(&out);
	for (size_t i = 0; m->slots && i <= m->mask; i++) {
		const struct idmap_slot *s = &m->slots[i];
		if (s->used && keep(p, s) && idmap_put(&out, s->key, s->val) < 0) {
			idmap_release(&out);
			return -1;
		}
	}
	idmap_release(m);
	*m = out;
	return 0;
}

static int
location_alive(const struct pins *p, const struct idmap_slot *s)
{
	uint32_t x;
	return !idmap_get(&p->dead, s->val, &x);
}

static int
mapping_alive(const struct pins *p, const struct idmap_slot *s)
{
	uint32_t x;
	return !idmap_get(&p->dead, s->key, &x);
}

int
pins_forgotten(struct pins *p, uint32_t id)
{
	uint32_t n;

	if (!idmap_get(&p->nlocs, id, &n) || idmap_get(&p->dead, id, &n))
		return 0;
	if (idmap_put(&p->dead, id, 1) < 0)
		return -1;
	p->dead_locs += n;
	/* Amortized: a pass costs what is kept, and runs once as much is gone. */
	if (p->dead_locs < PINS_MIN_SWEEP || p->dead_locs * 2 < p->loc.count)
		return 0;
	if (filter(&p->loc, location_alive, p) < 0 || filter(&p->nlocs, mapping_alive, p) < 0)
		return -1;
	idmap_clear(&p->dead);
	p->dead_locs = 0;
	return 0;
}
