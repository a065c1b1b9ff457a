#include "winmodel.h"
#include "grow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
winmodel_init(struct winmodel *w)
{
	memset(w, 0, sizeof(*w));
	defs_init(&w->defs);
	idmap_init(&w->label_ix);
}

void
winmodel_release(struct winmodel *w)
{
	defs_release(&w->defs);
	idmap_release(&w->label_ix);
	free(w->labels);
	free(w->stacks);
	free(w->locs);
	winmodel_init(w);
}

static int
fail(struct winmodel *w, const char *why)
{
	snprintf(w->err, sizeof(w->err), "%s", why);
	return -1;
}

/* Every location, and every function and mapping it names, must be defined: the derived
 * outputs must not show a stack pprof refuses. */
static int
check_loc(struct winmodel *w, uint32_t id)
{
	const struct def_location *l = defs_location(&w->defs, id);
	size_t j;

	if (!l) {
		snprintf(w->err, sizeof(w->err), "window %u stack references undefined location %u",
			 w->index, id);
		return -1;
	}
	if (l->mapping_id && !defs_mapping(&w->defs, l->mapping_id)) {
		snprintf(w->err, sizeof(w->err), "location %u references undefined mapping %u", id,
			 l->mapping_id);
		return -1;
	}
	for (j = 0; j < l->nlines; j++) {
		uint32_t fid = w->defs.lines[l->lines + j].function_id;

		if (!defs_function(&w->defs, fid)) {
			snprintf(w->err, sizeof(w->err),
				 "location %u references undefined function %u", id, fid);
			return -1;
		}
	}
	return 0;
}

static int
add_stack(struct winmodel *w, const struct fr_window_stack *s)
{
	uint16_t n = s->nlocs > STREAM_MAX_LOCS ? STREAM_MAX_LOCS : s->nlocs;
	uint16_t i;

	if (!w->open || s->index != w->index) {
		snprintf(w->err, sizeof(w->err), "stack of window %u outside that window",
			 s->index);
		return -1;
	}
	for (i = 0; i < n; i++)
		if (check_loc(w, s->locs[i]) < 0)
			return -1;
	if (grow_array((void **)&w->stacks, &w->cap_stacks, w->nstacks, 1, sizeof(*w->stacks)) < 0 ||
	    grow_array((void **)&w->locs, &w->cap_locs, w->nlocs, n, sizeof(*w->locs)) < 0)
		return fail(w, "out of memory");
	w->stacks[w->nstacks++] = (struct wstack){ .pid = s->pid, .tid = s->tid,
						   .count = s->count, .nanos = s->nanos,
						   .locs = w->nlocs, .nlocs = n };
	memcpy(w->locs + w->nlocs, s->locs, n * sizeof(*s->locs));
	w->nlocs += n;
	w->total_count += s->count;
	w->total_nanos += s->nanos;
	return 0;
}

static int
start_window(struct winmodel *w, const struct fr_window_start *ws)
{
	if (w->open) {
		snprintf(w->err, sizeof(w->err), "window %u starts inside window %u", ws->index,
			 w->index);
		return -1;
	}
	w->open = 1;
	w->index = ws->index;
	w->start = ws->start;
	w->end = ws->end;
	w->nstacks = w->nlocs = 0;
	w->total_count = w->total_nanos = 0;
	return 0;
}

/* pprof's name for a location without lines, "[" + basename of its mapping + "]", made
 * once per mapping when it is defined. */
static int
add_label(struct winmodel *w, const struct fr_mapping *m)
{
	const char *base = m->path.p, *p;
	size_t n;

	for (p = m->path.p; p && p < m->path.p + m->path.len; p++)
		if (*p == '/')
			base = p + 1;
	n = m->path.len - (size_t)(base - m->path.p);
	if (!m->path.len)
		return 0;
	if (grow_array((void **)&w->labels, &w->cap_labels, w->nlabels, n + 2, 1) < 0 ||
	    idmap_put(&w->label_ix, m->id, (uint32_t)w->nlabels) < 0)
		return fail(w, "out of memory");
	w->labels[w->nlabels] = '[';
	memcpy(w->labels + w->nlabels + 1, base, n);
	w->labels[w->nlabels + n + 1] = ']';
	w->nlabels += n + 2;
	return 0;
}

/* After defs gave back what was forgotten: the labels of the mappings that are left. */
static int
relabel(struct winmodel *w)
{
	const struct defs *d = &w->defs;

	w->nlabels = 0;
	idmap_clear(&w->label_ix);
	for (size_t i = 0; i < d->nmappings; i++) {
		const struct def_mapping *m = &d->mappings[i];
		struct fr_mapping fm = { .id = m->id,
					 .path = { defs_str(d, m->path), (uint16_t)m->path.len } };
		if (add_label(w, &fm) < 0)
			return -1;
	}
	return 0;
}

int
winmodel_take(struct winmodel *w, const struct frame *f)
{
	union {
		struct fr_mapping mapping;
		struct fr_window_start ws;
		struct fr_window_stack stack;
	} u;
	int rc;

	switch (f->type) {
	case FR_MAPPING:
		if ((rc = stream_get_mapping(f, &u.mapping, w->err, sizeof(w->err))) == 0 &&
		    (rc = defs_add_mapping(&w->defs, &u.mapping)) < 0)
			return fail(w, w->defs.err);
		return rc < 0 ? rc : add_label(w, &u.mapping);
	case FR_WINDOW_START:
		if (stream_get_window_start(f, &u.ws, w->err, sizeof(w->err)) < 0)
			return -1;
		return start_window(w, &u.ws);
	case FR_WINDOW_STACK:
		if (w->offcpu)
			return 0;
		if (stream_get_window_stack(f, &u.stack, w->err, sizeof(w->err)) < 0)
			return -1;
		return add_stack(w, &u.stack);
	case FR_WINDOW_OFFCPU_STACK:
		if (!w->offcpu)
			return 0;
		if (stream_get_window_offcpu_stack(f, &u.stack, w->err, sizeof(w->err)) < 0)
			return -1;
		return add_stack(w, &u.stack);
	case FR_FORGET: {
		uint64_t passes = w->defs.compactions;
		if (defs_take(&w->defs, f) < 0)
			return fail(w, w->defs.err);
		return passes == w->defs.compactions ? 0 : relabel(w);
	}
	default:
		/* The other definitions need nothing beyond what defs keeps. */
		return defs_take(&w->defs, f) < 0 ? fail(w, w->defs.err) : 0;
	}
}

int
winmodel_end(struct winmodel *w, const struct frame *f, struct fr_window_end *we)
{
	if (stream_get_window_end(f, we, w->err, sizeof(w->err)) < 0)
		return -1;
	if (!w->open || we->index != w->index) {
		snprintf(w->err, sizeof(w->err), "window end %u without its window start",
			 we->index);
		return -1;
	}
	w->open = 0;
	return 0;
}

/* The process name of pid: its main thread's latest name, the target's name, or "pid N". */
static struct wframe
root_frame(struct winmodel *w, uint32_t pid)
{
	const struct defs *d = &w->defs;
	const struct pstr *c = defs_comm(d, pid);
	int n;

	if (c && c->len)
		return (struct wframe){ defs_str(d, *c), c->len, WF_ROOT };
	if (d->have_target && pid == d->target_pid && d->comm.len)
		return (struct wframe){ defs_str(d, d->comm), d->comm.len, WF_ROOT };
	n = snprintf(w->rootbuf, sizeof(w->rootbuf), "pid %u", pid);
	return (struct wframe){ w->rootbuf, (uint32_t)n, WF_ROOT };
}

/* The label add_label made for l's mapping, or "<unknown>". */
static struct wframe
unsymbolized(const struct winmodel *w, const struct def_location *l)
{
	const struct def_mapping *m = l->mapping_id ? defs_mapping(&w->defs, l->mapping_id)
						    : NULL;
	uint32_t off;

	if (!m || !m->path.len || !idmap_get(&w->label_ix, m->id, &off))
		return (struct wframe){ "<unknown>", 9, WF_UNSYMBOLIZED };
	/* The label is the path's basename plus two brackets; the basename length follows
	 * from the path. */
	const char *p = defs_str(&w->defs, m->path), *base = strrchr(p, '/');
	uint32_t n = (uint32_t)(m->path.len - (size_t)((base ? base + 1 : p) - p));

	return (struct wframe){ w->labels + off, n + 2, WF_UNSYMBOLIZED };
}

size_t
winmodel_frames(struct winmodel *w, const struct wstack *s, struct wframe *out)
{
	const struct defs *d = &w->defs;
	size_t n = 0;
	int i, j;

	out[n++] = root_frame(w, s->pid);
	for (i = s->nlocs - 1; i >= 0; i--) {
		const struct def_location *l = defs_location(d, w->locs[s->locs + (size_t)i]);
		const struct def_mapping *m = l->mapping_id ? defs_mapping(d, l->mapping_id)
							    : NULL;
		uint8_t kind = m && (m->flags & MAPPING_KERNEL) ? WF_KERNEL : WF_USER;

		if (!l->nlines) {
			out[n++] = unsymbolized(w, l);
			continue;
		}
		for (j = l->nlines - 1; j >= 0; j--) {
			const struct def_function *fn =
				defs_function(d, d->lines[l->lines + (size_t)j].function_id);

			out[n++] = (struct wframe){ defs_str(d, fn->name), fn->name.len, kind };
		}
	}
	return n;
}
