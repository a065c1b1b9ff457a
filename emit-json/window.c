#include "window.h"
#include "outname.h"

#include <string.h>

#define SCHEMA "https://rustprofile.invalid/json-windows/1"

static const char *const kind_names[] = { "root", "user", "kernel", "unsymbolized" };

/* The sample types of p, as its pprof has them (emit-pprof/profile.c). */
static size_t
sample_types(const struct emitter *e, const struct emitter_profile *p, const char *t[4],
	     const char *u[4])
{
	const struct defs *d = &e->defs;

	if (p->heap) {
		t[0] = "alloc_objects", u[0] = "count", t[1] = "alloc_space", u[1] = "bytes";
		t[2] = "inuse_objects", u[2] = "count", t[3] = "inuse_space", u[3] = "bytes";
		return 4;
	}
	if (p->offcpu) {
		t[0] = "intervals", u[0] = "count", t[1] = "off_cpu", u[1] = "nanoseconds";
		return 2;
	}
	t[0] = "samples", u[0] = "count", t[1] = "cpu", u[1] = "nanoseconds";
	if (d->sample_type.len && d->sample_unit.len) {
		/* An imported event other than a clock: its own type and unit.  The pool's
		 * strings are followed by a NUL (lib/defs.c). */
		t[1] = defs_str(d, d->sample_type);
		u[1] = defs_str(d, d->sample_unit);
	}
	if (!d->cycles)
		return 2;
	t[1] = "cycles", u[1] = "count", t[2] = "cpu", u[2] = "nanoseconds";
	return 3;
}

static void
put_header(struct jwin *w, const struct emitter *e, const struct emitter_profile *p,
	   size_t *nt)
{
	struct json *j = &w->j;
	const struct fr_window_end *we = &e->we;
	const char *t[4], *u[4];
	char session[17];

	outname_session(session, e->hdr.session_id);
	json_kstring(j, "$schema", SCHEMA);
	json_kstring(j, "session_id", session);
	json_kstring(j, "kind", p->prefix);
	json_key(j, "window");
	json_object_begin(j);
	json_ku64(j, "index", we->index);
	json_ki64(j, "start_unix_nanos", stream_unix_ns(we->start, e->hdr.clock_offset_ns));
	json_ki64(j, "end_unix_nanos", stream_unix_ns(we->end, e->hdr.clock_offset_ns));
	json_ku64(j, "duration_nanos", we->end > we->start ? we->end - we->start : 0);
	json_object_end(j);
	*nt = sample_types(e, p, t, u);
	json_key(j, "sample_types");
	json_array_begin(j);
	for (size_t i = 0; i < *nt; i++) {
		json_object_begin(j);
		json_kstring(j, "type", t[i]);
		json_kstring(j, "unit", u[i]);
		json_object_end(j);
	}
	json_array_end(j);
	if (p->heap) {
		json_key(j, "delta_types");
		json_array_begin(j);
		json_str(j, "inuse_objects");
		json_str(j, "inuse_space");
		json_array_end(j);
	}
}

/* 1 when every location of s, and every function it names, is still defined (a stack of
 * the previous window may name what a forget frame has since taken away). */
static int
defined(const struct defs *d, const struct wset *set, const struct wstack *s)
{
	for (uint16_t i = 0; i < s->nlocs; i++) {
		const struct def_location *l = defs_location(d, set->locs[s->locs + i]);

		if (!l)
			return 0;
		for (size_t k = 0; k < l->nlines; k++)
			if (!defs_function(d, d->lines[l->lines + k].function_id))
				return 0;
	}
	return 1;
}

static void
put_frames(struct jwin *w, struct emitter *e, const struct wset *set, const struct wstack *s)
{
	struct json *j = &w->j;
	size_t n;

	if (defined(&e->defs, set, s)) {
		n = winmodel_frames(&e->wm, set, s, w->frames);
	} else {
		struct wstack root = *s;

		root.nlocs = 0;
		winmodel_frames(&e->wm, set, &root, w->frames);
		w->frames[1] = (struct wframe){ "<forgotten>", 11, WF_UNSYMBOLIZED };
		n = 2;
	}
	json_key(j, "frames");
	json_array_begin(j);
	for (size_t i = 0; i < n; i++) {
		json_object_begin(j);
		json_key(j, "name");
		json_string_len(j, w->frames[i].name, w->frames[i].len);
		json_kstring(j, "kind", kind_names[w->frames[i].kind & 3]);
		json_object_end(j);
	}
	json_array_end(j);
}

static void
put_labels(struct jwin *w, const struct defs *d, const struct wstack *s)
{
	struct json *j = &w->j;
	const struct pstr *c = defs_comm(d, s->tid);

	json_key(j, "labels");
	json_object_begin(j);
	json_ku64(j, "process.pid", s->pid);
	json_ku64(j, "thread.id", s->tid);
	if (c && c->len) {
		json_key(j, "thread.name");
		json_string_len(j, defs_str(d, *c), c->len);
	}
	json_object_end(j);
}

/* One stack: v its values (nv of them), dv its two in-use deltas or NULL. */
static void
put_stack(struct jwin *w, struct emitter *e, const struct wset *set, const struct wstack *s,
	  const uint64_t *v, size_t nv, const int64_t *dv)
{
	struct json *j = &w->j;

	json_object_begin(j);
	put_frames(w, e, set, s);
	put_labels(w, &e->defs, s);
	json_key(j, "values");
	json_array_begin(j);
	for (size_t i = 0; i < nv; i++)
		json_u64(j, v[i]);
	json_array_end(j);
	if (dv) {
		json_key(j, "delta");
		json_array_begin(j);
		json_i64(j, dv[0]);
		json_i64(j, dv[1]);
		json_array_end(j);
	}
	json_object_end(j);
}

static void
put_heap_stacks(struct jwin *w, struct emitter *e, const struct wset *set)
{
	struct delta *d = &w->delta;
	uint64_t po, ps;

	for (size_t i = 0; i < set->nstacks; i++) {
		const struct wstack *s = &set->stacks[i];
		uint64_t v[4] = { s->alloc_objects, s->alloc_space, s->count, s->nanos };

		delta_prev(d, set, s, &po, &ps);
		int64_t dv[2] = { (int64_t)(s->count - po), (int64_t)(s->nanos - ps) };
		put_stack(w, e, set, s, v, 4, dv);
	}
	/* What the previous window held and this one has not: released whole. */
	struct wset prev = { .heap = 1, .locs = d->prev.locs };
	for (size_t i = 0; i < d->prev.n; i++) {
		const struct delta_entry *p = &d->prev.e[i];
		if (p->seen || (!p->inuse_objects && !p->inuse_space))
			continue;
		struct wstack s = { .pid = p->pid, .tid = p->tid, .locs = p->locs,
				    .nlocs = p->nlocs };
		uint64_t v[4] = { 0, 0, 0, 0 };
		int64_t dv[2] = { -(int64_t)p->inuse_objects, -(int64_t)p->inuse_space };
		put_stack(w, e, &prev, &s, v, 4, dv);
	}
}

int
jwin_write(struct jwin *w, struct emitter *e, const struct emitter_profile *p, FILE *f)
{
	struct json *j = &w->j;
	const struct wset *set = p->heap ? &e->wm.heap_all : p->set;
	size_t nt;

	if (p->heap && delta_take(&w->delta, set) < 0)
		return -1;
	json_init(j, f, w->pretty);
	json_object_begin(j);
	put_header(w, e, p, &nt);
	json_key(j, "stacks");
	json_array_begin(j);
	if (p->heap) {
		put_heap_stacks(w, e, set);
		delta_next(&w->delta);
	} else {
		for (size_t i = 0; i < set->nstacks; i++) {
			const struct wstack *s = &set->stacks[i];
			uint64_t v[3] = { s->count, s->nanos,
					  defs_cycles_ns(s->count, e->defs.cpu_frequency) };
			put_stack(w, e, set, s, v, nt, NULL);
		}
	}
	json_array_end(j);
	json_object_end(j);
	return json_finish(j);
}
