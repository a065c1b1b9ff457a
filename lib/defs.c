#include "defs.h"
#include "grow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
defs_init(struct defs *d)
{
	memset(d, 0, sizeof(*d));
	d->profile_cpu = 1; /* a stream without a target (a replayed capture) is a cpu one */
	idmap_init(&d->mapping_ix);
	idmap_init(&d->function_ix);
	idmap_init(&d->location_ix);
	idmap_init(&d->comm_ix);
}

void
defs_release(struct defs *d)
{
	free(d->pool);
	free(d->mappings);
	free(d->functions);
	free(d->locations);
	free(d->lines);
	free(d->comms);
	idmap_release(&d->mapping_ix);
	idmap_release(&d->function_ix);
	idmap_release(&d->location_ix);
	idmap_release(&d->comm_ix);
	defs_init(d);
}

static int
oom(struct defs *d)
{
	snprintf(d->err, sizeof(d->err), "out of memory");
	return -1;
}

#define GROW(d, arr, n, cap, more) \
	grow_array((void **)&(d)->arr, &(d)->cap, (d)->n, (more), sizeof(*(d)->arr))

/* Copies p[0..n) and a NUL into the pool. */
static int
pool_add(struct defs *d, const char *p, size_t n, struct pstr *out)
{
	if (grow_array((void **)&d->pool, &d->pool_cap, d->pool_len, n + 1, 1) < 0)
		return oom(d);
	memcpy(d->pool + d->pool_len, p, n);
	d->pool[d->pool_len + n] = 0;
	out->off = d->pool_len;
	out->len = (uint32_t)n;
	d->pool_len += n + 1;
	return 0;
}

static int
pool_str(struct defs *d, struct str s, struct pstr *out)
{
	return pool_add(d, s.p ? s.p : "", s.p ? s.len : 0, out);
}

int
defs_set_target(struct defs *d, const struct fr_target *t)
{
	d->target_pid = t->pid;
	d->cpu_frequency = t->cpu_frequency;
	d->have_target = 1;
	d->profile_cpu = t->profiles.len == 0;
	for (size_t i = 0; i < t->profiles.len;) {
		size_t j = i;
		while (j < t->profiles.len && t->profiles.p[j] != ',')
			j++;
		if (j - i == 3 && memcmp(t->profiles.p + i, "cpu", 3) == 0)
			d->profile_cpu = 1;
		i = j + 1;
	}
	d->profile_offcpu = (t->flags & TARGET_OFFCPU) != 0;
	if (pool_str(d, t->exe, &d->exe) < 0)
		return -1;
	return pool_str(d, t->comm, &d->comm);
}

static int
redefined(struct defs *d, const struct idmap *ix, const char *what, uint32_t id)
{
	uint32_t dummy;

	if (!idmap_get(ix, id, &dummy))
		return 0;
	snprintf(d->err, sizeof(d->err), "%s %u defined twice", what, id);
	return 1;
}

int
defs_add_mapping(struct defs *d, const struct fr_mapping *m)
{
	static const char hex[] = "0123456789abcdef";
	char bid[2 * STREAM_BUILD_ID_MAX];
	struct def_mapping *v;
	unsigned i, n = m->build_id_len > STREAM_BUILD_ID_MAX ? STREAM_BUILD_ID_MAX
							       : m->build_id_len;

	if (redefined(d, &d->mapping_ix, "mapping", m->id))
		return -1;
	if (GROW(d, mappings, nmappings, cap_mappings, 1) < 0)
		return oom(d);
	v = &d->mappings[d->nmappings];
	*v = (struct def_mapping){ .id = m->id, .pid = m->pid, .flags = m->flags,
				   .start = m->start, .limit = m->limit, .offset = m->offset };
	for (i = 0; i < n; i++) {
		bid[2 * i] = hex[m->build_id[i] >> 4];
		bid[2 * i + 1] = hex[m->build_id[i] & 15];
	}
	if (pool_str(d, m->path, &v->path) < 0 || pool_add(d, bid, 2 * n, &v->build_id) < 0)
		return -1;
	if (idmap_put(&d->mapping_ix, m->id, (uint32_t)d->nmappings) < 0)
		return oom(d);
	d->nmappings++;
	return 0;
}

int
defs_add_function(struct defs *d, const struct fr_function *f)
{
	struct def_function *v;

	if (redefined(d, &d->function_ix, "function", f->id))
		return -1;
	if (GROW(d, functions, nfunctions, cap_functions, 1) < 0)
		return oom(d);
	v = &d->functions[d->nfunctions];
	*v = (struct def_function){ .id = f->id, .start_line = f->start_line };
	if (pool_str(d, f->name, &v->name) < 0 ||
	    pool_str(d, f->system_name, &v->system_name) < 0 ||
	    pool_str(d, f->filename, &v->filename) < 0)
		return -1;
	if (idmap_put(&d->function_ix, f->id, (uint32_t)d->nfunctions) < 0)
		return oom(d);
	d->nfunctions++;
	return 0;
}

int
defs_add_location(struct defs *d, const struct fr_location *l)
{
	struct def_location *v;
	uint16_t n = l->nlines > STREAM_MAX_LINES ? STREAM_MAX_LINES : l->nlines;

	if (redefined(d, &d->location_ix, "location", l->id))
		return -1;
	if (GROW(d, locations, nlocations, cap_locations, 1) < 0 ||
	    GROW(d, lines, nlines, cap_lines, n) < 0)
		return oom(d);
	v = &d->locations[d->nlocations];
	*v = (struct def_location){ .id = l->id, .mapping_id = l->mapping_id,
				    .address = l->address, .lines = d->nlines, .nlines = n };
	memcpy(d->lines + d->nlines, l->lines, n * sizeof(*l->lines));
	if (idmap_put(&d->location_ix, l->id, (uint32_t)d->nlocations) < 0)
		return oom(d);
	d->nlines += n;
	d->nlocations++;
	return 0;
}

int
defs_set_comm(struct defs *d, const struct fr_comm *c)
{
	uint32_t i;

	if (!idmap_get(&d->comm_ix, c->tid, &i)) {
		if (GROW(d, comms, ncomms, cap_comms, 1) < 0 ||
		    idmap_put(&d->comm_ix, c->tid, (uint32_t)d->ncomms) < 0)
			return oom(d);
		i = (uint32_t)d->ncomms++;
	}
	/* Renames are rare (exec, prctl), so the old name simply stays in the pool. */
	return pool_str(d, c->comm, &d->comms[i]);
}

const struct def_mapping *
defs_mapping(const struct defs *d, uint32_t id)
{
	uint32_t i;

	return idmap_get(&d->mapping_ix, id, &i) ? &d->mappings[i] : NULL;
}

const struct def_function *
defs_function(const struct defs *d, uint32_t id)
{
	uint32_t i;

	return idmap_get(&d->function_ix, id, &i) ? &d->functions[i] : NULL;
}

const struct def_location *
defs_location(const struct defs *d, uint32_t id)
{
	uint32_t i;

	return idmap_get(&d->location_ix, id, &i) ? &d->locations[i] : NULL;
}

const struct pstr *
defs_comm(const struct defs *d, uint32_t tid)
{
	uint32_t i;

	return idmap_get(&d->comm_ix, tid, &i) ? &d->comms[i] : NULL;
}

int
defs_take(struct defs *d, const struct frame *f)
{
	static union {
		struct fr_target target;
		struct fr_mapping mapping;
		struct fr_function function;
		struct fr_location location;
		struct fr_comm comm;
	} u;                    /* large (a location): keep it off the stack */
	char *e = d->err;
	size_t n = sizeof(d->err);

	switch (f->type) {
	case FR_TARGET:
		return stream_get_target(f, &u.target, e, n) < 0 ||
		       defs_set_target(d, &u.target) < 0 ? -1 : 1;
	case FR_MAPPING:
		return stream_get_mapping(f, &u.mapping, e, n) < 0 ||
		       defs_add_mapping(d, &u.mapping) < 0 ? -1 : 1;
	case FR_FUNCTION:
		return stream_get_function(f, &u.function, e, n) < 0 ||
		       defs_add_function(d, &u.function) < 0 ? -1 : 1;
	case FR_LOCATION:
		return stream_get_location(f, &u.location, e, n) < 0 ||
		       defs_add_location(d, &u.location) < 0 ? -1 : 1;
	case FR_COMM:
		return stream_get_comm(f, &u.comm, e, n) < 0 ||
		       defs_set_comm(d, &u.comm) < 0 ? -1 : 1;
	default:
		return 0;
	}
}
