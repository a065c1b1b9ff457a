#include "profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Profile field numbers (see /work/shared/reference/pprof.md, section 2). */
enum {
	P_SAMPLE_TYPE = 1, P_SAMPLE = 2, P_MAPPING = 3, P_LOCATION = 4, P_FUNCTION = 5,
	P_TIME_NANOS = 9, P_DURATION = 10, P_PERIOD_TYPE = 11, P_PERIOD = 12,
	P_COMMENT = 13, P_DEFAULT_SAMPLE_TYPE = 14,
};

/* The heap profile's comment (manual: in-use covers what was seen after the attach). */
#define HEAP_COMMENT "inuse_objects and inuse_space cover only allocations observed since " \
	"rustprofile attached (or since the last reset: an exec, a probe reattach); blocks " \
	"already live at attach are unknown and excluded"

/* The physical profiles' comments (docs/physical.md). */
#define PHYSICAL_ALLOC_COMMENT "physical pages the kernel allocated to the target in the " \
	"window, by the user stack that made it allocate them; sampled, scaled by " \
	"100/--physical-memory-probability"
#define PHYSICAL_USAGE_COMMENT "a snapshot at the window's end of the pages tracked since " \
	"the recording started and still allocated, unscaled: not the process's RSS (pages " \
	"allocated before the recording, or not sampled, are unknown); do not sum windows"

void
profile_init(struct profile *p, const struct defs *d)
{
	memset(p, 0, sizeof(*p));
	p->defs = d;
	pb_init(&p->samples);
	pb_init(&p->rest);
	idmap_init(&p->loc_ix);
	idmap_init(&p->fn_ix);
	idmap_init(&p->map_ix);
}

void
profile_release(struct profile *p)
{
	strtab_release(&p->strs);
	pb_release(&p->samples);
	pb_release(&p->rest);
	idmap_release(&p->loc_ix);
	idmap_release(&p->fn_ix);
	idmap_release(&p->map_ix);
	free(p->locs);
	free(p->fns);
	free(p->maps);
	profile_init(p, p->defs);
}

static int
oom(struct profile *p)
{
	snprintf(p->err, sizeof(p->err), "out of memory");
	return -1;
}

/* Appends id to list and maps key -> its 1-based position. */
static int
list_add(uint32_t **list, size_t *n, size_t *cap, struct idmap *ix, uint32_t id)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 1024;
		uint32_t *l = realloc(*list, c * sizeof(*l));

		if (!l)
			return -1;
		*list = l;
		*cap = c;
	}
	(*list)[(*n)++] = id;
	return idmap_put(ix, id, (uint32_t)*n);
}

int
profile_begin(struct profile *p, const struct fr_window_start *ws)
{
	if ((p->strs.slots ? strtab_reset(&p->strs) : strtab_init(&p->strs)) < 0)
		return oom(p);
	pb_reset(&p->samples);
	pb_reset(&p->rest);
	idmap_clear(&p->loc_ix);
	idmap_clear(&p->fn_ix);
	idmap_clear(&p->map_ix);
	p->nlocs = p->nfns = p->nmaps = 0;
	p->nstacks = 0;
	p->str_failed = 0;
	p->index = ws->index;
	p->open = 1;
	/* OpenTelemetry-style keys, as the manual names them; numeric labels get a unit so
	 * a value of 0 survives pprof's reader (pprof.md section 6). */
	p->k_pid = strtab_cstr(&p->strs, "process.pid");
	p->u_pid = strtab_cstr(&p->strs, "pid");
	p->k_tid = strtab_cstr(&p->strs, "thread.id");
	p->u_tid = strtab_cstr(&p->strs, "tid");
	p->k_tname = strtab_cstr(&p->strs, "thread.name");
	for (size_t i = 0; i < DEFS_LABELS; i++)
		p->k_labels[i] = p->defs->labels[i].len ?
			strtab_cstr(&p->strs, defs_label_keys[i]) : -1;
	return pb_failed(&p->strs.enc) ? oom(p) : 0;
}

static void
num_label(struct pb *b, int64_t key, int64_t v, int64_t unit)
{
	size_t m = pb_open(b, 3);

	pb_uint(b, 1, (uint64_t)key);
	pb_int(b, 3, v);
	pb_uint(b, 4, (uint64_t)unit);
	pb_close(b, m);
}

static int
str_label(struct profile *p, struct pb *b, int64_t key, struct pstr value)
{
	int64_t v = strtab_add(&p->strs, defs_str(p->defs, value), value.len);
	if (v < 0)
		return -1;
	size_t m = pb_open(b, 3);
	pb_uint(b, 1, (uint64_t)key);
	pb_uint(b, 2, (uint64_t)v);
	pb_close(b, m);
	return 0;
}

/* Window ids of the stack's n locations, in p->scratch. */
static int
renumber_stack(struct profile *p, const uint32_t *locs, uint32_t n)
{
	uint32_t i, w;

	for (i = 0; i < n; i++) {
		if (!idmap_get(&p->loc_ix, locs[i], &w)) {
			if (!defs_location(p->defs, locs[i])) {
				snprintf(p->err, sizeof(p->err),
					 "window %u stack references undefined location %u",
					 p->index, locs[i]);
				return -1;
			}
			if (list_add(&p->locs, &p->nlocs, &p->cap_locs, &p->loc_ix, locs[i]) < 0)
				return oom(p);
			w = (uint32_t)p->nlocs;
		}
		p->scratch[i] = w;
	}
	return 0;
}

/* One Sample: the stack's locations, its values and the thread's labels. */
static int
add_sample(struct profile *p, uint32_t pid, uint32_t tid, const uint32_t *locs, uint32_t nlocs,
	   const uint64_t *values, unsigned nvalues)
{
	struct pb *b = &p->samples;
	const struct pstr *name;
	size_t m, l;
	/* the decoder bounds nlocs; stay safe if it ever does not */
	uint32_t i, n = nlocs > STREAM_MAX_LOCS ? STREAM_MAX_LOCS : nlocs;

	if (renumber_stack(p, locs, n) < 0)
		return -1;
	m = pb_open(b, P_SAMPLE);
	l = pb_open(b, 1);
	for (i = 0; i < n; i++)
		pb_varint(b, p->scratch[i]);
	pb_close(b, l);
	l = pb_open(b, 2);
	for (i = 0; i < nvalues; i++)
		pb_varint(b, values[i]);
	pb_close(b, l);
	num_label(b, p->k_pid, pid, p->u_pid);
	num_label(b, p->k_tid, tid, p->u_tid);
	/* A container target's identity on every sample. */
	for (size_t i = 0; i < DEFS_LABELS; i++)
		if (p->k_labels[i] >= 0 && str_label(p, b, p->k_labels[i], p->defs->labels[i]) < 0)
			return oom(p);
	/* An empty string label would vanish in pprof anyway: leave it out. */
	if ((name = defs_comm(p->defs, tid)) && name->len) {
		int64_t v = strtab_add(&p->strs, defs_str(p->defs, *name), name->len);

		if (v < 0)
			return oom(p);
		l = pb_open(b, 3);
		pb_uint(b, 1, (uint64_t)p->k_tname);
		pb_uint(b, 2, (uint64_t)v);
		pb_close(b, l);
	}
	pb_close(b, m);
	p->nstacks++;
	return pb_failed(b) ? oom(p) : 0;
}

int
profile_add_stack(struct profile *p, const struct fr_window_stack *s)
{
	/* Cycles: the periods summed are cycles, the CPU time an estimate after them. */
	uint64_t v[3] = { s->count, s->nanos,
			  defs_cycles_ns(s->count, p->defs->cpu_frequency) };
	return add_sample(p, s->pid, s->tid, s->locs, s->nlocs, v, p->defs->cycles ? 3 : 2);
}

int
profile_add_heap_stack(struct profile *p, const struct fr_window_heap_stack *s)
{
	uint64_t v[4] = { s->alloc_objects, s->alloc_space, s->inuse_objects, s->inuse_space };
	return add_sample(p, s->pid, s->tid, s->locs, s->nlocs, v, 4);
}

int
profile_add_page_stack(struct profile *p, const struct fr_window_page_stack *s)
{
	uint64_t v[2] = { s->alloc_pages, s->alloc_bytes };

	if (p->physical == 2) {
		v[0] = s->usage_pages;
		v[1] = s->usage_bytes;
	}
	return v[0] ? add_sample(p, s->pid, s->tid, s->locs, s->nlocs, v, 2) : 0;
}

/* String index of s; on failure 0 and str_failed, checked once at the end. */
static uint64_t
str_ix(struct profile *p, const char *s, size_t n)
{
	int64_t i = strtab_add(&p->strs, s, n);

	if (i < 0) {
		p->str_failed = 1;
		return 0;
	}
	return (uint64_t)i;
}

static uint64_t
pstr_ix(struct profile *p, struct pstr s)
{
	return str_ix(p, defs_str(p->defs, s), s.len);
}

/* Collects the functions and mappings the window's locations use, checking each exists. */
static int
collect_refs(struct profile *p)
{
	const struct defs *d = p->defs;
	const struct def_location *loc;
	uint32_t dummy, fid;
	size_t i, j;

	for (i = 0; i < p->nlocs; i++) {
		loc = defs_location(d, p->locs[i]);
		if (loc->mapping_id && !idmap_get(&p->map_ix, loc->mapping_id, &dummy)) {
			if (!defs_mapping(d, loc->mapping_id)) {
				snprintf(p->err, sizeof(p->err),
					 "location %u references undefined mapping %u", loc->id,
					 loc->mapping_id);
				return -1;
			}
			if (list_add(&p->maps, &p->nmaps, &p->cap_maps, &p->map_ix,
				     loc->mapping_id) < 0)
				return oom(p);
		}
		for (j = 0; j < loc->nlines; j++) {
			fid = d->lines[loc->lines + j].function_id;
			if (idmap_get(&p->fn_ix, fid, &dummy))
				continue;
			if (!defs_function(d, fid)) {
				snprintf(p->err, sizeof(p->err),
					 "location %u references undefined function %u", loc->id,
					 fid);
				return -1;
			}
			if (list_add(&p->fns, &p->nfns, &p->cap_fns, &p->fn_ix, fid) < 0)
				return oom(p);
		}
	}
	return 0;
}

/* pprof expects mapping[0] to be the main executable: the target's exe, or failing that
 * the first user-space mapping of the target process. */
static int
is_main(const struct profile *p, const struct def_mapping *m, int by_exe)
{
	const struct defs *d = p->defs;

	if (m->flags & MAPPING_KERNEL)
		return 0;
	if (by_exe)
		return d->exe.len && m->path.len == d->exe.len &&
		       strcmp(defs_str(d, m->path), defs_str(d, d->exe)) == 0;
	return d->have_target && m->pid == d->target_pid;
}

static int
order_mappings(struct profile *p)
{
	size_t i, found = p->nmaps;
	int pass;
	uint32_t id;

	for (pass = 1; pass >= 0 && found == p->nmaps; pass--)
		for (i = 0; i < p->nmaps && found == p->nmaps; i++)
			if (is_main(p, defs_mapping(p->defs, p->maps[i]), pass))
				found = i;
	if (found == p->nmaps || found == 0)
		return 0;
	id = p->maps[found];
	memmove(p->maps + 1, p->maps, found * sizeof(*p->maps));
	p->maps[0] = id;
	for (i = 0; i <= found; i++)
		if (idmap_put(&p->map_ix, p->maps[i], (uint32_t)i + 1) < 0)
			return oom(p);
	return 0;
}

static void
put_mapping(struct profile *p, uint32_t wid, const struct def_mapping *m)
{
	struct pb *b = &p->rest;
	size_t o = pb_open(b, P_MAPPING);
	int kernel = (m->flags & MAPPING_KERNEL) != 0;

	pb_uint(b, 1, wid);
	pb_uint_opt(b, 2, m->start);
	pb_uint_opt(b, 3, m->limit);
	pb_uint_opt(b, 4, m->offset);
	/* pprof recognises the kernel by this exact name (pprof.md section 8). */
	pb_uint_opt(b, 5, kernel ? str_ix(p, "[kernel.kallsyms]", 17) : pstr_ix(p, m->path));
	if (m->build_id.len)
		pb_uint(b, 6, pstr_ix(p, m->build_id));
	pb_uint_opt(b, 7, !!(m->flags & MAPPING_HAS_FUNCTIONS));
	pb_uint_opt(b, 8, !!(m->flags & MAPPING_HAS_FILENAMES));
	pb_uint_opt(b, 9, !!(m->flags & MAPPING_HAS_LINES));
	pb_uint_opt(b, 10, !!(m->flags & MAPPING_HAS_INLINES));
	pb_close(b, o);
}

static void
put_location(struct profile *p, uint32_t wid, const struct def_location *l)
{
	struct pb *b = &p->rest;
	size_t o = pb_open(b, P_LOCATION), lo, j;
	uint32_t w = 0;

	pb_uint(b, 1, wid);
	if (l->mapping_id)
		idmap_get(&p->map_ix, l->mapping_id, &w);
	pb_uint_opt(b, 2, w);
	pb_uint_opt(b, 3, l->address);
	/* Innermost inlined function first, as the stream and pprof both order them. */
	for (j = 0; j < l->nlines; j++) {
		const struct fr_line *ln = &p->defs->lines[l->lines + j];

		w = 0;
		idmap_get(&p->fn_ix, ln->function_id, &w);
		lo = pb_open(b, 4);
		pb_uint(b, 1, w);
		pb_uint_opt(b, 2, ln->line);
		pb_close(b, lo);
	}
	pb_close(b, o);
}

static void
put_function(struct profile *p, uint32_t wid, const struct def_function *f)
{
	struct pb *b = &p->rest;
	size_t o = pb_open(b, P_FUNCTION);
	uint64_t name = pstr_ix(p, f->name);

	pb_uint(b, 1, wid);
	pb_uint_opt(b, 2, name);
	/* One name only: pprof asks for system_name = name then. */
	pb_uint_opt(b, 3, f->system_name.len ? pstr_ix(p, f->system_name) : name);
	pb_uint_opt(b, 4, pstr_ix(p, f->filename));
	pb_uint_opt(b, 5, f->start_line);
	pb_close(b, o);
}

static void
put_value_type(struct profile *p, uint32_t field, const char *type, const char *unit)
{
	size_t o = pb_open(&p->rest, field);

	pb_uint(&p->rest, 1, str_ix(p, type, strlen(type)));
	pb_uint(&p->rest, 2, str_ix(p, unit, strlen(unit)));
	pb_close(&p->rest, o);
}

/* sample_type, period and times: samples/count first and cpu/nanoseconds last, so even a
 * reader ignoring default_sample_type picks the time column. */
/* The heap profile: four values, in-use bytes the default, the interval as the period. */
static void
put_heap_header(struct profile *p, const struct fr_window_end *we, int64_t clock_offset_ns)
{
	struct pb *b = &p->rest;

	put_value_type(p, P_SAMPLE_TYPE, "alloc_objects", "count");
	put_value_type(p, P_SAMPLE_TYPE, "alloc_space", "bytes");
	put_value_type(p, P_SAMPLE_TYPE, "inuse_objects", "count");
	put_value_type(p, P_SAMPLE_TYPE, "inuse_space", "bytes");
	pb_int(b, P_TIME_NANOS, stream_unix_ns(we->start, clock_offset_ns));
	pb_int(b, P_DURATION, we->end > we->start ? (int64_t)(we->end - we->start) : 0);
	put_value_type(p, P_PERIOD_TYPE, "space", "bytes");
	pb_int(b, P_PERIOD, (int64_t)p->defs->alloc_interval);
	pb_uint(b, P_COMMENT, str_ix(p, HEAP_COMMENT, strlen(HEAP_COMMENT)));
	pb_uint(b, P_DEFAULT_SAMPLE_TYPE, str_ix(p, "inuse_space", 11));
}

/* The physical profiles: pages and bytes, bytes the default.  The allocations' period is
 * the mean bytes one sampled page stands for; the usage, unscaled, is a snapshot (no
 * duration) of whole pages. */
static void
put_physical_header(struct profile *p, const struct fr_window_end *we,
		    int64_t clock_offset_ns)
{
	struct pb *b = &p->rest;
	int usage = p->physical == 2;
	uint32_t percent = p->defs->physical_percent ? p->defs->physical_percent : 100;
	const char *comment = usage ? PHYSICAL_USAGE_COMMENT : PHYSICAL_ALLOC_COMMENT;

	put_value_type(p, P_SAMPLE_TYPE, usage ? "inuse_pages" : "alloc_pages", "count");
	put_value_type(p, P_SAMPLE_TYPE, usage ? "inuse_space" : "alloc_space", "bytes");
	pb_int(b, P_TIME_NANOS, stream_unix_ns(usage ? we->end : we->start, clock_offset_ns));
	pb_int(b, P_DURATION, !usage && we->end > we->start ? (int64_t)(we->end - we->start) : 0);
	put_value_type(p, P_PERIOD_TYPE, "space", "bytes");
	pb_int(b, P_PERIOD, usage ? 4096 : (int64_t)((409600 + percent / 2) / percent));
	pb_uint(b, P_COMMENT, str_ix(p, comment, strlen(comment)));
	pb_uint(b, P_DEFAULT_SAMPLE_TYPE, str_ix(p, usage ? "inuse_space" : "alloc_space", 11));
}

static void
put_header(struct profile *p, const struct fr_window_end *we, int64_t clock_offset_ns)
{
	struct pb *b = &p->rest;

	if (p->heap) {
		put_heap_header(p, we, clock_offset_ns);
		return;
	}
	if (p->physical) {
		put_physical_header(p, we, clock_offset_ns);
		return;
	}

	if (p->offcpu) {
		/* Event-driven: no period; the time column is the default. */
		put_value_type(p, P_SAMPLE_TYPE, "intervals", "count");
		put_value_type(p, P_SAMPLE_TYPE, "off_cpu", "nanoseconds");
		pb_int(b, P_TIME_NANOS, stream_unix_ns(we->start, clock_offset_ns));
		pb_int(b, P_DURATION, we->end > we->start ? (int64_t)(we->end - we->start) : 0);
		pb_uint(b, P_DEFAULT_SAMPLE_TYPE, str_ix(p, "off_cpu", 7));
		return;
	}
	/* An imported event other than a clock counts in its own unit (cycles/count). */
	const struct defs *d = p->defs;
	const char *type = "cpu", *unit = "nanoseconds";
	int ns = 1;
	if (d->sample_type.len && d->sample_unit.len) {
		type = defs_str(d, d->sample_type);
		unit = defs_str(d, d->sample_unit);
		ns = !strcmp(type, "cpu") && !strcmp(unit, "nanoseconds");
	}
	if (d->cycles) {
		type = "cycles";
		unit = "count";
		ns = 0;
	}
	put_value_type(p, P_SAMPLE_TYPE, "samples", "count");
	put_value_type(p, P_SAMPLE_TYPE, type, unit);
	if (d->cycles)
		put_value_type(p, P_SAMPLE_TYPE, "cpu", "nanoseconds");
	pb_int(b, P_TIME_NANOS, stream_unix_ns(we->start, clock_offset_ns));
	pb_int(b, P_DURATION, we->end > we->start ? (int64_t)(we->end - we->start) : 0);
	put_value_type(p, P_PERIOD_TYPE, type, unit);
	if (ns && d->cpu_frequency)
		pb_int(b, P_PERIOD, 1000000000 / d->cpu_frequency);
	pb_uint(b, P_DEFAULT_SAMPLE_TYPE, str_ix(p, type, strlen(type)));
}

int
profile_end(struct profile *p, const struct fr_window_end *we, int64_t clock_offset_ns)
{
	size_t i;

	p->open = 0;
	if (collect_refs(p) < 0 || order_mappings(p) < 0)
		return -1;
	put_header(p, we, clock_offset_ns);
	for (i = 0; i < p->nmaps; i++)
		put_mapping(p, (uint32_t)i + 1, defs_mapping(p->defs, p->maps[i]));
	for (i = 0; i < p->nlocs; i++)
		put_location(p, (uint32_t)i + 1, defs_location(p->defs, p->locs[i]));
	for (i = 0; i < p->nfns; i++)
		put_function(p, (uint32_t)i + 1, defs_function(p->defs, p->fns[i]));
	if (p->str_failed || pb_failed(&p->rest) || pb_failed(&p->strs.enc))
		return oom(p);
	return 0;
}
