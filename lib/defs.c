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

/* Fewer forgotten entries than this are not worth a pass over the tables. */
#define DEFS_MIN_COMPACT 1024

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

const char *const defs_label_keys[DEFS_LABELS] = {
	"container.id", "container.name", "k8s.namespace.name", "k8s.pod.name", "k8s.pod.uid",
	"k8s.container.name",
};

/* A Pod's container is named by k8s.container.name; a Docker container by container.name. */
static int
set_labels(struct defs *d, const struct fr_target *t)
{
	struct str none = { "", 0 };
	int pod = t->k8s_pod_uid.len > 0;
	const struct str v[DEFS_LABELS] = {
		t->container_id, pod ? none : t->container_name, t->k8s_namespace, t->k8s_pod_name,
		t->k8s_pod_uid, pod ? t->container_name : none,
	};
	for (size_t i = 0; i < DEFS_LABELS; i++)
		if (pool_str(d, v[i], &d->labels[i]) < 0)
			return -1;
	return 0;
}

int
defs_profile_named(struct str list, const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; i < list.len;) {
		size_t j = i;
		while (j < list.len && list.p[j] != ',')
			j++;
		if (j - i == n && memcmp(list.p + i, name, n) == 0)
			return 1;
		i = j + 1;
	}
	return 0;
}

int
defs_set_target(struct defs *d, const struct fr_target *t)
{
	d->target_pid = t->pid;
	d->cpu_frequency = t->cpu_frequency;
	d->have_target = 1;
	d->profile_cpu = t->profiles.len == 0 || defs_profile_named(t->profiles, "cpu");
	d->profile_offcpu = (t->flags & TARGET_OFFCPU) != 0;
	d->profile_heap = (t->flags & TARGET_HEAP) != 0;
	/* Physical: the profiles named; a target naming neither (an older producer) has both. */
	d->profile_physical_alloc = d->profile_physical_usage = 0;
	if (t->flags & TARGET_PHYSICAL) {
		d->profile_physical_alloc = defs_profile_named(t->profiles, "physical-alloc");
		d->profile_physical_usage = defs_profile_named(t->profiles, "physical-usage");
		if (!d->profile_physical_alloc && !d->profile_physical_usage)
			d->profile_physical_alloc = d->profile_physical_usage = 1;
	}
	d->physical_percent = t->physical_percent && t->physical_percent <= 100 ?
			      t->physical_percent : 100;
	d->alloc_interval = t->alloc_interval;
	d->cycles = str_eq(t->cpu_event, "cycles") && t->cpu_frequency;
	if (pool_str(d, t->exe, &d->exe) < 0 || pool_str(d, t->sample_type, &d->sample_type) < 0 ||
	    pool_str(d, t->sample_unit, &d->sample_unit) < 0 || set_labels(d, t) < 0)
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
	uint32_t mi;
	if (idmap_get(&d->mapping_ix, l->mapping_id, &mi))
		d->mappings[mi].nlocations++;
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
		d->comms[i] = (struct def_comm){ .tid = c->tid };
	} else if (d->comms[i].gone) {
		/* A new thread with the tid of one that ended. */
		d->comms[i].gone = 0;
		d->gone--;
	}
	d->comms[i].pid = c->pid;
	/* Renames are rare (exec, prctl), so the old name simply stays in the pool. */
	return pool_str(d, c->comm, &d->comms[i].name);
}

/* ---- forgetting ---- */

/* Copies s from the old pool into the new one (pool_add grows d->pool). */
static int
repool(struct defs *d, const char *old, struct pstr *s)
{
	return pool_add(d, old + s->off, s->len, s);
}

/* Rebuilds every table and the pool from what was not forgotten.  Mapping, location and
 * comm indexes change; function indexes do not (functions are never forgotten). */
static int
compact(struct defs *d)
{
	char *old = d->pool;
	size_t nm = 0, nl = 0, nlines = 0, nc = 0;

	d->pool = NULL;
	d->pool_len = d->pool_cap = 0;
	if (repool(d, old, &d->exe) < 0 || repool(d, old, &d->comm) < 0)
		goto fail;
	for (size_t i = 0; i < d->nfunctions; i++) {
		struct def_function *f = &d->functions[i];
		if (repool(d, old, &f->name) < 0 || repool(d, old, &f->system_name) < 0 ||
		    repool(d, old, &f->filename) < 0)
			goto fail;
	}
	/* Locations first: whether one stays depends on its mapping, looked up in the old
	 * index.  Lines move down in place, in order. */
	idmap_clear(&d->location_ix);
	for (size_t i = 0; i < d->nlocations; i++) {
		struct def_location l = d->locations[i];
		uint32_t mi;
		if (idmap_get(&d->mapping_ix, l.mapping_id, &mi) && d->mappings[mi].gone)
			continue;
		memmove(d->lines + nlines, d->lines + l.lines, l.nlines * sizeof(*d->lines));
		l.lines = nlines;
		nlines += l.nlines;
		if (idmap_put(&d->location_ix, l.id, (uint32_t)nl) < 0)
			goto fail;
		d->locations[nl++] = l;
	}
	idmap_clear(&d->mapping_ix);
	for (size_t i = 0; i < d->nmappings; i++) {
		struct def_mapping m = d->mappings[i];
		if (m.gone)
			continue;
		if (repool(d, old, &m.path) < 0 || repool(d, old, &m.build_id) < 0 ||
		    idmap_put(&d->mapping_ix, m.id, (uint32_t)nm) < 0)
			goto fail;
		d->mappings[nm++] = m;
	}
	idmap_clear(&d->comm_ix);
	for (size_t i = 0; i < d->ncomms; i++) {
		struct def_comm c = d->comms[i];
		if (c.gone)
			continue;
		if (repool(d, old, &c.name) < 0 || idmap_put(&d->comm_ix, c.tid, (uint32_t)nc) < 0)
			goto fail;
		d->comms[nc++] = c;
	}
	free(old);
	d->nmappings = nm;
	d->nlocations = nl;
	d->nlines = nlines;
	d->ncomms = nc;
	d->gone = 0;
	d->compactions++;
	return 0;
fail:
	free(old);
	return oom(d);
}

static void
forget_comm(struct defs *d, size_t i)
{
	if (!d->comms[i].gone) {
		d->comms[i].gone = 1;
		d->gone++;
	}
}

int
defs_forget(struct defs *d, const struct fr_forget *f)
{
	uint32_t i;

	for (uint32_t k = 0; k < f->n; k++) {
		if (!idmap_get(&d->mapping_ix, stream_forget_id(f, k), &i))
			continue;
		struct def_mapping *m = &d->mappings[i];
		if (!m->gone) {
			m->gone = 1;
			d->gone += 1 + (size_t)m->nlocations;
		}
	}
	if (f->tid) {
		if (idmap_get(&d->comm_ix, f->tid, &i) && d->comms[i].pid == f->pid)
			forget_comm(d, i);
	} else if (f->pid) {
		for (size_t j = 0; j < d->ncomms; j++)
			if (d->comms[j].pid == f->pid)
				forget_comm(d, j);
	}
	/* Amortized: a pass costs what is kept, and runs once as much is gone. */
	size_t all = d->nmappings + d->nlocations + d->ncomms;
	if (d->gone >= DEFS_MIN_COMPACT && d->gone * 2 >= all)
		return compact(d);
	return 0;
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

	return idmap_get(&d->comm_ix, tid, &i) ? &d->comms[i].name : NULL;
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
		struct fr_forget forget;
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
	case FR_FORGET:
		return stream_get_forget(f, &u.forget, e, n) < 0 ||
		       defs_forget(d, &u.forget) < 0 ? -1 : 1;
	default:
		return 0;
	}
}

uint64_t
defs_cycles_ns(uint64_t count, uint32_t hz)
{
	return hz ? count * (1000000000u / hz) + count * (1000000000u % hz) / hz : 0;
}
