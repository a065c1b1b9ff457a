#include "winmodel.h"
#include "grow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
winmodel_init(struct winmodel *w, const struct defs *d)
{
	memset(w, 0, sizeof(*w));
	w->defs = d;
	w->off.offcpu = 1;
	w->heap.heap = w->heap_all.heap = 1;
	idmap_init(&w->label_ix);
}

static void
set_release(struct wset *set)
{
	free(set->stacks);
	free(set->locs);
}

void
winmodel_release(struct winmodel *w)
{
	const struct defs *d = w->defs;

	idmap_release(&w->label_ix);
	free(w->labels);
	set_release(&w->cpu);
	set_release(&w->off);
	set_release(&w->heap);
	set_release(&w->heap_all);
	winmodel_init(w, d);
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
check_loc(struct winmodel *w, uint32_t index, uint32_t id)
{
	const struct def_location *l = defs_location(w->defs, id);
	size_t j;

	if (!l) {
		snprintf(w->err, sizeof(w->err), "window %u stack references undefined location %u",
			 index, id);
		return -1;
	}
	if (l->mapping_id && !defs_mapping(w->defs, l->mapping_id)) {
		snprintf(w->err, sizeof(w->err), "location %u references undefined mapping %u", id,
			 l->mapping_id);
		return -1;
	}
	for (j = 0; j < l->nlines; j++) {
		uint32_t fid = w->defs->lines[l->lines + j].function_id;

		if (!defs_function(w->defs, fid)) {
			snprintf(w->err, sizeof(w->err),
				 "location %u references undefined function %u", id, fid);
			return -1;
		}
	}
	return 0;
}

/* Keeps one stack of the open window in set: 0, or -1 with w->err. */
static int
keep(struct winmodel *w, struct wset *set, uint32_t index, const struct wstack *v,
     const uint32_t *locs, uint16_t nlocs)
{
	uint16_t i, n = nlocs > STREAM_MAX_LOCS ? STREAM_MAX_LOCS : nlocs;

	if (!set->open)
		return 0;
	for (i = 0; i < n; i++)
		if (check_loc(w, index, locs[i]) < 0)
			return -1;
	if (grow_array((void **)&set->stacks, &set->cap_stacks, set->nstacks, 1,
		       sizeof(*set->stacks)) < 0 ||
	    grow_array((void **)&set->locs, &set->cap_locs, set->nlocs, n, sizeof(*set->locs)) < 0)
		return fail(w, "out of memory");
	set->stacks[set->nstacks] = *v;
	set->stacks[set->nstacks].locs = set->nlocs;
	set->stacks[set->nstacks++].nlocs = n;
	memcpy(set->locs + set->nlocs, locs, n * sizeof(*locs));
	set->nlocs += n;
	set->total_count += v->count;
	set->total_nanos += v->nanos;
	return 0;
}

int
winmodel_stack(struct winmodel *w, int offcpu, const struct fr_window_stack *s)
{
	struct wset *set = offcpu ? &w->off : &w->cpu;
	struct wstack v = { .pid = s->pid, .tid = s->tid, .count = s->count, .nanos = s->nanos };
	return keep(w, set, s->index, &v, s->locs, s->nlocs);
}

static void
set_begin(struct wset *set, int open)
{
	set->open = open;
	set->nstacks = set->nlocs = 0;
	set->total_count = set->total_nanos = 0;
}

void
winmodel_begin(struct winmodel *w, int offcpu, int heap)
{
	set_begin(&w->cpu, 1);
	set_begin(&w->off, offcpu);
	set_begin(&w->heap, heap);
	set_begin(&w->heap_all, heap);
}

void
winmodel_end(struct winmodel *w)
{
	w->cpu.open = w->off.open = w->heap.open = w->heap_all.open = 0;
}

int
winmodel_heap_stack(struct winmodel *w, const struct fr_window_heap_stack *s)
{
	struct wstack v = { .pid = s->pid, .tid = s->tid, .count = s->inuse_objects,
			    .nanos = s->inuse_space, .alloc_objects = s->alloc_objects,
			    .alloc_space = s->alloc_space };
	if (s->inuse_space && keep(w, &w->heap, s->index, &v, s->locs, s->nlocs) < 0)
		return -1;
	return keep(w, &w->heap_all, s->index, &v, s->locs, s->nlocs);
}

/* pprof's name for a location without lines, "[" + basename of its mapping + "]", made
 * once per mapping when it is defined. */
static int
add_label(struct winmodel *w, const struct def_mapping *m)
{
	const char *path = defs_str(w->defs, m->path), *base = path, *p;
	size_t n;

	if (!m->path.len)
		return 0;
	for (p = path; p < path + m->path.len; p++)
		if (*p == '/')
			base = p + 1;
	n = m->path.len - (size_t)(base - path);
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
	const struct defs *d = w->defs;

	w->nlabels = 0;
	idmap_clear(&w->label_ix);
	w->compactions = d->compactions;
	for (size_t i = 0; i < d->nmappings; i++)
		if (add_label(w, &d->mappings[i]) < 0)
			return -1;
	return 0;
}

int
winmodel_frame(struct winmodel *w, const struct frame *f)
{
	const struct defs *d = w->defs;

	/* defs_take appended the mapping it defines. */
	if (f->type == FR_MAPPING && d->nmappings)
		return add_label(w, &d->mappings[d->nmappings - 1]);
	if (f->type == FR_FORGET && w->compactions != d->compactions)
		return relabel(w);
	return 0;
}

/* The process name of pid: its main thread's latest name, the target's name, or "pid N". */
static struct wframe
root_frame(struct winmodel *w, uint32_t pid)
{
	const struct defs *d = w->defs;
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
	const struct def_mapping *m = l->mapping_id ? defs_mapping(w->defs, l->mapping_id)
						    : NULL;
	uint32_t off;

	if (!m || !m->path.len || !idmap_get(&w->label_ix, m->id, &off))
		return (struct wframe){ "<unknown>", 9, WF_UNSYMBOLIZED };
	/* The label is the path's basename plus two brackets; the basename length follows
	 * from the path. */
	const char *p = defs_str(w->defs, m->path), *base = strrchr(p, '/');
	uint32_t n = (uint32_t)(m->path.len - (size_t)((base ? base + 1 : p) - p));

	return (struct wframe){ w->labels + off, n + 2, WF_UNSYMBOLIZED };
}

size_t
winmodel_frames(struct winmodel *w, const struct wset *set, const struct wstack *s,
		struct wframe *out)
{
	const struct defs *d = w->defs;
	size_t n = 0;
	int i, j;

	out[n++] = root_frame(w, s->pid);
	for (i = s->nlocs - 1; i >= 0; i--) {
		const struct def_location *l = defs_location(d, set->locs[s->locs + (size_t)i]);
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
