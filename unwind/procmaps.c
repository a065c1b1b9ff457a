#include "procmaps.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"

/* Generations count for every table at once: a process that takes the pid of one that
 * ended never meets a cached result of its predecessor (fpstack.c keys them by pid and
 * generation). */
static uint64_t generations;

static size_t
slot(const struct proctab *t, uint32_t pid)
{
	size_t lo = 0, hi = t->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (t->procs[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct proc *
proctab_find(struct proctab *t, uint32_t pid)
{
	size_t i = slot(t, pid);
	return i < t->n && t->procs[i].pid == pid ? &t->procs[i] : NULL;
}

struct proc *
proctab_get(struct proctab *t, uint32_t pid)
{
	size_t lo = slot(t, pid);
	if (lo < t->n && t->procs[lo].pid == pid)
		return &t->procs[lo];
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		struct proc *np = realloc(t->procs, cap * sizeof(*np));
		if (!np)
			return NULL;
		t->procs = np;
		t->cap = cap;
	}
	memmove(&t->procs[lo + 1], &t->procs[lo], (t->n - lo) * sizeof(*t->procs));
	t->n++;
	memset(&t->procs[lo], 0, sizeof(*t->procs));
	t->procs[lo].pid = pid;
	t->procs[lo].tab = t;
	t->procs[lo].gen = ++generations;
	return &t->procs[lo];
}

/* A mapping no process maps any more: its id, when one was written, goes on the table's
 * gone list (when that cannot grow, the id is merely never forgotten downstream). */
static void
map_free(struct proc *p, struct map *m)
{
	struct proctab *t = p->tab;
	if (m->mapping_id && t &&
	    grow_array((void **)&t->gone, &t->capgone, t->ngone, 1, sizeof(*t->gone)) == 0)
		t->gone[t->ngone++] = m->mapping_id;
	free(m->path);
	idmap_release(&m->locs);
}

static int
reserve(struct proc *p, size_t extra)
{
	if (p->n + extra <= p->cap)
		return 0;
	size_t cap = p->cap ? p->cap * 2 : 16;
	while (cap < p->n + extra)
		cap *= 2;
	struct map *nm = realloc(p->maps, cap * sizeof(*nm));
	if (!nm)
		return -1;
	p->maps = nm;
	p->cap = cap;
	return 0;
}

/* Cuts [start, end) out of the existing mappings, splitting one if needed. */
static int
punch(struct proc *p, uint64_t start, uint64_t end)
{
	for (size_t i = 0; i < p->n; i++) {
		struct map *m = &p->maps[i];
		if (m->end <= start || m->start >= end)
			continue;
		if (m->start < start && m->end > end) {
			if (reserve(p, 1) < 0)
				return -1;
			m = &p->maps[i];
			struct map tail = *m;
			tail.path = strdup(m->path);
			if (!tail.path)
				return -1;
			tail.pgoff += end - m->start;
			tail.start = end;
			tail.mapping_id = 0;
			idmap_init(&tail.locs); /* the head keeps the locations written */
			m->end = start;
			memmove(&p->maps[i + 2], &p->maps[i + 1], (p->n - i - 1) * sizeof(*m));
			p->maps[i + 1] = tail;
			p->n++;
			return 0;
		}
		if (m->start >= start && m->end <= end) {
			map_free(p, m);
			memmove(m, m + 1, (p->n - i - 1) * sizeof(*m));
			p->n--;
			i--;
		} else if (m->start < start) {
			m->end = start;
		} else {
			m->pgoff += end - m->start;
			m->start = end;
		}
	}
	return 0;
}

/* 1 when the process maps exactly this already: the same range, offset, file and build id.
 * collect reports the mappings of a process again after it reopened its events (an exec, a
 * fallback), and those of a new one it learns late; such a report changes nothing, and
 * replacing the mapping would forget its id and locations while the heap's in-use blocks
 * and later windows still name them. */
static int
same_map(const struct proc *p, const struct fr_mmap *f)
{
	if (!f->build_id_len)
		return 0;	/* without a build id the file may have changed under its name */
	for (size_t i = 0; i < p->n && p->maps[i].start <= f->start; i++) {
		const struct map *m = &p->maps[i];
		if (m->start == f->start && m->end - m->start == f->len && m->pgoff == f->pgoff &&
		    m->build_id_len == f->build_id_len &&
		    memcmp(m->build_id, f->build_id, f->build_id_len) == 0 &&
		    strlen(m->path) == f->path.len && memcmp(m->path, f->path.p, f->path.len) == 0)
			return 1;
	}
	return 0;
}

int
proc_map(struct proc *p, const struct fr_mmap *f)
{
	if (f->len == 0 || same_map(p, f))
		return 0;
	p->gen = ++generations;
	if (punch(p, f->start, f->start + f->len) < 0 || reserve(p, 1) < 0)
		return -1;
	struct map m = { .start = f->start, .end = f->start + f->len, .pgoff = f->pgoff,
			 .build_id_len = f->build_id_len };
	idmap_init(&m.locs);
	memcpy(m.build_id, f->build_id, sizeof(m.build_id));
	m.path = str_dup(f->path);
	if (!m.path)
		return -1;
	size_t i = 0;
	while (i < p->n && p->maps[i].start < m.start)
		i++;
	memmove(&p->maps[i + 1], &p->maps[i], (p->n - i) * sizeof(m));
	p->maps[i] = m;
	p->n++;
	return 0;
}

void
proc_clear(struct proc *p)
{
	for (size_t i = 0; i < p->n; i++)
		map_free(p, &p->maps[i]);
	p->n = 0;
	p->gen = ++generations;
}

void
proc_touch(struct proc *p)
{
	p->gen = ++generations;
}

int
map_is_anon(const struct map *m)
{
	/* perf's name for anonymous memory, a named one (PR_SET_VMA_ANON_NAME), memfd. */
	return !m->path[0] || strcmp(m->path, "//anon") == 0 ||
	       strncmp(m->path, "[anon", 5) == 0 || strncmp(m->path, "/memfd:", 7) == 0;
}

void
proctab_drop(struct proctab *t, uint32_t pid)
{
	size_t i = slot(t, pid);
	if (i >= t->n || t->procs[i].pid != pid)
		return;
	proc_clear(&t->procs[i]);
	free(t->procs[i].maps);
	memmove(&t->procs[i], &t->procs[i + 1], (t->n - i - 1) * sizeof(*t->procs));
	t->n--;
}

struct map *
proc_find(struct proc *p, uint64_t addr)
{
	size_t lo = 0, hi = p->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (p->maps[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < p->n && p->maps[lo].start <= addr && addr < p->maps[lo].end)
		return &p->maps[lo];
	return NULL;
}

void
proctab_release(struct proctab *t)
{
	for (size_t i = 0; i < t->n; i++) {
		t->procs[i].tab = NULL;
		proc_clear(&t->procs[i]);
		free(t->procs[i].maps);
	}
	free(t->procs);
	free(t->gone);
	t->procs = NULL;
	t->gone = NULL;
	t->n = t->ngone = t->capgone = 0;
}
