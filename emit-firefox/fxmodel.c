#include "fxmodel.h"
#include "grow.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
fxmodel_init(struct fxmodel *m, const struct defs *d)
{
	memset(m, 0, sizeof(*m));
	m->defs = d;
	fxstr_init(&m->strs);
	fxstr_init(&m->lib_paths);
	idmap_init(&m->lib_ix);
	idmap_init(&m->fn_ix);
	idmap_init(&m->unsym_ix);
	idmap_init(&m->src_ix);
	idmap_init(&m->frame_ix);
	idmap_init(&m->stack_ix);
	idmap_init(&m->thread_ix);
}

void
fxmodel_release(struct fxmodel *m)
{
	const struct defs *d = m->defs;

	fxstr_release(&m->strs);
	fxstr_release(&m->lib_paths);
	free(m->libs);
	free(m->funcs);
	free(m->sources);
	free(m->frames);
	free(m->stack_frame);
	free(m->stack_prefix);
	free(m->threads);
	free(m->sample_stack);
	free(m->sample_thread);
	free(m->order);
	free(m->alloc_stack);
	free(m->alloc_thread);
	free(m->alloc_order);
	idmap_release(&m->lib_ix);
	idmap_release(&m->fn_ix);
	idmap_release(&m->unsym_ix);
	idmap_release(&m->src_ix);
	idmap_release(&m->frame_ix);
	idmap_release(&m->stack_ix);
	idmap_release(&m->thread_ix);
	fxmodel_init(m, d);
}

static void
clear(struct fxmodel *m)
{
	fxstr_clear(&m->strs);
	fxstr_clear(&m->lib_paths);
	m->n_libs = m->n_funcs = m->n_sources = m->n_frames = 0;
	m->n_stack_frame = m->n_stack_prefix = m->n_threads = 0;
	m->n_sample_stack = m->n_sample_thread = m->n_order = 0;
	m->n_alloc_stack = m->n_alloc_thread = m->n_alloc_order = 0;
	m->fa = NULL;
	idmap_clear(&m->lib_ix);
	idmap_clear(&m->fn_ix);
	idmap_clear(&m->unsym_ix);
	idmap_clear(&m->src_ix);
	idmap_clear(&m->frame_ix);
	idmap_clear(&m->stack_ix);
	idmap_clear(&m->thread_ix);
	m->symbolicated = 0;
	m->err[0] = 0;
}

static int
fail(struct fxmodel *m, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(m->err, sizeof(m->err), fmt, ap);
	va_end(ap);
	return -1;
}

/* Appends v to array member a of m; evaluates to -1 when out of memory. */
#define PUSH(m, a, v)                                                                   \
	(grow_array((void **)&(m)->a, &(m)->cap_##a, (m)->n_##a, 1, sizeof(*(m)->a)) < 0      \
		 ? -1                                                                    \
		 : ((m)->a[(m)->n_##a++] = (v), 0))

static int
oom(struct fxmodel *m)
{
	return fail(m, "out of memory");
}

static const char *
base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s && s[1] ? s + 1 : path;
}

/* The library (and resource, the same index) of mapping mp: one per mapped file. */
static int32_t
lib_of(struct fxmodel *m, const struct def_mapping *mp)
{
	const char *path = defs_str(m->defs, mp->path);
	int32_t key = fxstr_cstr(&m->lib_paths, path), name;
	uint32_t ix;

	if (key < 0)
		return oom(m);
	if (idmap_get(&m->lib_ix, (uint32_t)key, &ix))
		return (int32_t)ix;
	if ((name = fxstr_cstr(&m->strs, base_name(path))) < 0)
		return oom(m);
	ix = (uint32_t)m->n_libs;
	if (PUSH(m, libs, ((struct fxlib){ mp, name })) < 0 ||
	    idmap_put(&m->lib_ix, (uint32_t)key, ix) < 0)
		return oom(m);
	return (int32_t)ix;
}

static int32_t
source_of(struct fxmodel *m, const char *file)
{
	int32_t s = fxstr_cstr(&m->strs, file);
	uint32_t ix;

	if (s < 0)
		return oom(m);
	if (idmap_get(&m->src_ix, (uint32_t)s, &ix))
		return (int32_t)ix;
	ix = (uint32_t)m->n_sources;
	if (PUSH(m, sources, s) < 0 || idmap_put(&m->src_ix, (uint32_t)s, ix) < 0)
		return oom(m);
	return (int32_t)ix;
}

/* The function of stream function fid in library lib (-1: none). */
static int32_t
func_of(struct fxmodel *m, uint32_t fid, int32_t lib)
{
	uint64_t key = (uint64_t)fid << 32 | (uint32_t)(lib + 1);
	const struct def_function *f;
	struct fxfunc v = { .resource = lib, .source = -1 };
	const char *name;
	uint32_t ix;

	if (idmap_get(&m->fn_ix, key, &ix))
		return (int32_t)ix;
	if (!(f = defs_function(m->defs, fid)))
		return fail(m, "location refers to undefined function %u", fid);
	name = defs_str(m->defs, f->name);
	if (!*name)
		name = defs_str(m->defs, f->system_name);
	if ((v.name = fxstr_cstr(&m->strs, *name ? name : "<unknown>")) < 0)
		return oom(m);
	if (*defs_str(m->defs, f->filename) &&
	    (v.source = source_of(m, defs_str(m->defs, f->filename))) < 0)
		return -1;
	v.line = f->start_line;
	ix = (uint32_t)m->n_funcs;
	if (PUSH(m, funcs, v) < 0 || idmap_put(&m->fn_ix, key, ix) < 0)
		return oom(m);
	return (int32_t)ix;
}

/* A location without lines: a function named by its address, as samply does. */
static int32_t
unsym_func_of(struct fxmodel *m, const struct def_location *l, int64_t rel, int32_t lib)
{
	struct fxfunc v = { .resource = lib, .source = -1 };
	char name[32];
	uint32_t ix;

	if (idmap_get(&m->unsym_ix, l->id, &ix))
		return (int32_t)ix;
	snprintf(name, sizeof(name), "0x%" PRIx64, rel >= 0 ? (uint64_t)rel : l->address);
	if ((v.name = fxstr_cstr(&m->strs, name)) < 0)
		return oom(m);
	ix = (uint32_t)m->n_funcs;
	if (PUSH(m, funcs, v) < 0 || idmap_put(&m->unsym_ix, l->id, ix) < 0)
		return oom(m);
	return (int32_t)ix;
}

/* Library-relative address: the file offset, which equals the ELF virtual address for the
 * usual layouts (text p_vaddr == p_offset).  Kernel frames get none: the symbol server
 * cannot have vmlinux, and their names come from kallsyms already. */
static int64_t
relative_address(const struct def_mapping *mp, uint64_t addr)
{
	uint64_t rel;

	if (!mp || (mp->flags & MAPPING_KERNEL) || addr < mp->start || addr >= mp->limit)
		return -1;
	rel = addr - mp->start + mp->offset;
	return rel > INT64_MAX ? -1 : (int64_t)rel;
}

/* Adds the frames of location id (outermost inlined function first) to path; returns how
 * many, or -1 with m->err. */
static int
location_frames(struct fxmodel *m, uint32_t id, int32_t *path)
{
	const struct def_location *l = defs_location(m->defs, id);
	const struct def_mapping *mp;
	struct fxframe fr;
	int32_t lib = -1;
	int nl, d;

	if (!l)
		return fail(m, "stack refers to undefined location %u", id);
	mp = l->mapping_id ? defs_mapping(m->defs, l->mapping_id) : NULL;
	if (l->mapping_id && !mp)
		return fail(m, "location %u refers to undefined mapping %u", id, l->mapping_id);
	if (mp && (lib = lib_of(m, mp)) < 0)
		return -1;
	nl = l->nlines ? l->nlines : 1;
	fr = (struct fxframe){ .address = relative_address(mp, l->address),
			       .category = !mp ? FXC_OTHER : mp->flags & MAPPING_KERNEL ? FXC_KERNEL
											: FXC_USER };
	for (d = 0; d < nl; d++) {
		uint64_t key = (uint64_t)id << 8 | (uint64_t)d;
		uint32_t ix;

		if (!idmap_get(&m->frame_ix, key, &ix)) {
			const struct fr_line *ln = l->nlines ? &m->defs->lines[l->lines + nl - 1 - d]
							     : NULL;
			fr.inline_depth = (uint8_t)d;
			fr.line = ln ? ln->line : 0;
			fr.func = ln ? func_of(m, ln->function_id, lib)
				     : unsym_func_of(m, l, fr.address, lib);
			if (fr.func < 0)
				return -1;
			m->symbolicated |= ln != NULL;
			ix = (uint32_t)m->n_frames;
			if (PUSH(m, frames, fr) < 0 || idmap_put(&m->frame_ix, key, ix) < 0)
				return oom(m);
		}
		path[d] = (int32_t)ix;
	}
	return nl;
}

/* The stack node for frame under prefix (-1: a root), created if new. */
static int32_t
stack_of(struct fxmodel *m, int32_t prefix, int32_t frame)
{
	uint64_t key = (uint64_t)(uint32_t)(prefix + 1) << 32 | (uint32_t)frame;
	uint32_t ix;

	if (idmap_get(&m->stack_ix, key, &ix))
		return (int32_t)ix;
	if (m->n_stack_frame >= INT32_MAX)
		return fail(m, "too many stacks");
	ix = (uint32_t)m->n_stack_frame;
	if (PUSH(m, stack_frame, frame) < 0 || PUSH(m, stack_prefix, prefix) < 0 ||
	    idmap_put(&m->stack_ix, key, ix) < 0)
		return oom(m);
	return (int32_t)ix;
}

/* The leaf stack node of sample s, walking its locations from the outermost caller. */
static int32_t
sample_stack(struct fxmodel *m, const struct timeline *t, const struct tl_sample *s)
{
	int32_t path[STREAM_MAX_LINES], prefix = -1;

	for (size_t i = s->nlocs; i-- > 0;) {
		int n = location_frames(m, t->locs[s->locs + i], path);
		if (n < 0)
			return -2;
		for (int d = 0; d < n; d++)
			if ((prefix = stack_of(m, prefix, path[d])) < 0)
				return -2;
	}
	return prefix;
}

/* Thread ids stay below 2^22 (pid_max), so bit 31 of the tid half marks the off-CPU track. */
static uint64_t
thread_key(uint32_t pid, uint32_t tid, int offcpu)
{
	return (uint64_t)pid << 32 | tid | (offcpu ? 1u << 31 : 0);
}

static int32_t
thread_of(struct fxmodel *m, uint32_t pid, uint32_t tid, int offcpu)
{
	uint64_t key = thread_key(pid, tid, offcpu);
	uint32_t ix;

	if (idmap_get(&m->thread_ix, key, &ix))
		return (int32_t)ix;
	ix = (uint32_t)m->n_threads;
	if (PUSH(m, threads, ((struct fxthread){ .pid = pid, .tid = tid, .offcpu = offcpu })) < 0 ||
	    idmap_put(&m->thread_ix, key, ix) < 0)
		return oom(m);
	return (int32_t)ix;
}

static int
cmp_thread(const void *a, const void *b)
{
	const struct fxthread *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->offcpu - y->offcpu;
}

struct keyed {
	uint64_t time;
	size_t i;
};

static int
cmp_keyed(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* Sorts a thread's samples by time; they already are unless aggregate released a late
 * event (older than its predecessor), which the timeline must not show out of order. */
static int
sort_slice(struct fxmodel *m, const struct timeline *t, size_t *o, size_t n)
{
	struct keyed *k;
	size_t i;

	for (i = 1; i < n && t->s[o[i - 1]].time <= t->s[o[i]].time; i++)
		;
	if (i >= n)
		return 0;
	if (!(k = malloc(n * sizeof(*k))))
		return oom(m);
	for (i = 0; i < n; i++)
		k[i] = (struct keyed){ t->s[o[i]].time, o[i] };
	qsort(k, n, sizeof(*k), cmp_keyed);
	for (i = 0; i < n; i++)
		o[i] = k[i].i;
	free(k);
	return 0;
}

/* Groups the entries of t by thread (thr: each one's thread index, set here), each group
 * in time order, into order; the threads' first/n (or first_alloc/n_alloc) say where. */
static int
group(struct fxmodel *m, const struct timeline *t, uint32_t *thr, size_t *order, int alloc)
{
	size_t i, nt = m->n_threads;
	uint32_t ix;

#define FIRST(th) (alloc ? &(th)->first_alloc : &(th)->first)
#define COUNT(th) (alloc ? &(th)->n_alloc : &(th)->n)
	for (i = 0; i < t->n; i++) {
		idmap_get(&m->thread_ix, thread_key(t->s[i].pid, t->s[i].tid,
						    !!(t->s[i].flags & TL_OFFCPU)), &ix);
		thr[i] = ix;
		(*COUNT(&m->threads[ix]))++;
	}
	for (i = 0; i < nt; i++)
		*FIRST(&m->threads[i]) = i ? *FIRST(&m->threads[i - 1]) + *COUNT(&m->threads[i - 1])
					   : 0;
	for (i = 0; i < nt; i++)
		*COUNT(&m->threads[i]) = 0;
	for (i = 0; i < t->n; i++) {
		struct fxthread *th = &m->threads[thr[i]];
		order[*FIRST(th) + (*COUNT(th))++] = i;
	}
	for (i = 0; i < nt; i++)
		if (sort_slice(m, t, order + *FIRST(&m->threads[i]), *COUNT(&m->threads[i])) < 0)
			return -1;
#undef FIRST
#undef COUNT
	return 0;
}

/* Orders threads by (pid, tid) and groups the samples and allocations by thread. */
static int
group_samples(struct fxmodel *m, const struct timeline *t, const struct timeline *at)
{
	size_t i, nt = m->n_threads;

	if (nt)
		qsort(m->threads, nt, sizeof(*m->threads), cmp_thread);
	for (i = 0; i < nt; i++) {
		const struct fxthread *th = &m->threads[i];
		if (idmap_put(&m->thread_ix, thread_key(th->pid, th->tid, th->offcpu), (uint32_t)i) < 0)
			return oom(m);
	}
	if (grow_array((void **)&m->order, &m->cap_order, t->n, 0, sizeof(*m->order)) < 0)
		return oom(m);
	m->n_order = t->n;
	if (group(m, t, m->sample_thread, m->order, 0) < 0)
		return -1;
	if (!at)
		return 0;
	if (grow_array((void **)&m->alloc_order, &m->cap_alloc_order, at->n, 0,
		       sizeof(*m->alloc_order)) < 0)
		return oom(m);
	m->n_alloc_order = at->n;
	return group(m, at, m->alloc_thread, m->alloc_order, 1);
}

/* 1 when every location of s is still defined and not forgotten (a free's stack may be an
 * old one). */
static int
locs_defined(const struct fxmodel *m, const struct timeline *t, const struct tl_sample *s)
{
	for (size_t i = 0; i < s->nlocs; i++) {
		const struct def_location *l = defs_location(m->defs, t->locs[s->locs + i]);
		const struct def_mapping *mp = l && l->mapping_id
						       ? defs_mapping(m->defs, l->mapping_id) : NULL;
		/* defs keeps a forgotten mapping until it compacts: gone is gone already. */
		if (!l || (l->mapping_id && (!mp || mp->gone)))
			return 0;
	}
	return 1;
}

/* The window's allocations: stacks and threads (the CPU track of each thread). */
static int
build_allocs(struct fxmodel *m, const struct timeline *at)
{
	for (size_t i = 0; i < at->n; i++) {
		const struct tl_sample *s = &at->s[i];
		int32_t stack = (s->flags & TL_FREE) && !locs_defined(m, at, s)
					? -1 : sample_stack(m, at, s);

		if (stack < -1 || thread_of(m, s->pid, s->tid, 0) < 0)
			return -1;
		if (PUSH(m, alloc_stack, stack) < 0 || PUSH(m, alloc_thread, 0) < 0)
			return oom(m);
	}
	return 0;
}

int
fxmodel_build(struct fxmodel *m, const struct timeline *t, const struct fxalloc *fa)
{
	clear(m);
	m->fa = fa;
	for (size_t i = 0; i < t->n; i++) {
		const struct tl_sample *s = &t->s[i];
		int32_t stack = sample_stack(m, t, s);

		if (stack < -1 || thread_of(m, s->pid, s->tid, !!(s->flags & TL_OFFCPU)) < 0)
			return -1;
		if (PUSH(m, sample_stack, stack) < 0 || PUSH(m, sample_thread, 0) < 0)
			return oom(m);
	}
	if (fa && build_allocs(m, &fa->tl) < 0)
		return -1;
	return group_samples(m, t, fa ? &fa->tl : NULL);
}
