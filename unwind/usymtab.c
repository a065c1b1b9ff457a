#include "usymtab.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demangle.h"

static struct usymmod *
find_or_add(struct usymtab *t, const struct fr_usym *u)
{
	for (size_t i = 0; i < t->n; i++) {
		struct usymmod *m = &t->mods[i];
		if (m->build_id_len == u->build_id_len &&
		    !memcmp(m->build_id, u->build_id, u->build_id_len) &&
		    strlen(m->path) == u->path.len && !memcmp(m->path, u->path.p, u->path.len))
			return m;
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16;
		struct usymmod *v = realloc(t->mods, cap * sizeof(*v));
		if (!v)
			return NULL;
		t->mods = v;
		t->cap = cap;
	}
	struct usymmod *m = &t->mods[t->n];
	memset(m, 0, sizeof(*m));
	if (!(m->path = str_dup(u->path)))
		return NULL;
	m->build_id_len = u->build_id_len;
	memcpy(m->build_id, u->build_id, sizeof(m->build_id));
	/* Without them (both 0) the symbols are taken as file offsets. */
	m->min_vaddr = u->min_vaddr;
	m->fo_min_vaddr = u->fo_min_vaddr;
	t->n++;
	return m;
}

int
usymtab_add(struct usymtab *t, const struct frame *f, char *err, size_t errlen)
{
	struct fr_usym u;
	if (stream_get_usym(f, &u, err, errlen) < 0)
		return -1;
	struct usymmod *m = find_or_add(t, &u);
	if (!m)
		goto oom;
	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 16;
		struct usym *v = realloc(m->syms, cap * sizeof(*v));
		if (!v)
			goto oom;
		m->syms = v;
		m->cap = cap;
	}
	struct usym s = { u.start, u.end, str_dup(u.name), NULL };
	if (!s.name)
		goto oom;
	s.demangled = sym_demangle(s.name);
	m->syms[m->n++] = s;
	m->sorted = 0;
	return 0;
oom:
	snprintf(err, errlen, "out of memory");
	return -1;
}

struct usymmod *
usymtab_module(struct usymtab *t, const uint8_t *build_id, size_t build_id_len,
	       const char *path)
{
	for (size_t i = 0; i < t->n; i++) {
		struct usymmod *m = &t->mods[i];
		if (build_id_len && m->build_id_len) {
			if (m->build_id_len == build_id_len &&
			    !memcmp(m->build_id, build_id, build_id_len))
				return m;
		} else if (!strcmp(m->path, path)) {
			return m;
		}
	}
	return NULL;
}

uint64_t
usymmod_vaddr(const struct usymmod *m, uint64_t addr, uint64_t map_start, uint64_t pgoff)
{
	if (m->fo_min_vaddr == USYM_UNKNOWN)
		return addr - map_start + m->min_vaddr;
	return addr - map_start + pgoff - m->fo_min_vaddr + m->min_vaddr;
}

static int
cmp(const void *a, const void *b)
{
	const struct usym *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

const struct usym *
usymmod_find(struct usymmod *m, uint64_t vaddr)
{
	if (!m->sorted) {
		if (m->n)
			qsort(m->syms, m->n, sizeof(*m->syms), cmp);
		m->sorted = 1;
	}
	size_t lo = 0, hi = m->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (m->syms[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Symbols may nest (aliases, labels): the nearest start below that still holds it. */
	for (size_t i = lo; i > 0 && lo - i < 8; i--)
		if (vaddr < m->syms[i - 1].end)
			return &m->syms[i - 1];
	return NULL;
}

void
usymtab_release(struct usymtab *t)
{
	for (size_t i = 0; i < t->n; i++) {
		for (size_t j = 0; j < t->mods[i].n; j++) {
			free(t->mods[i].syms[j].name);
			free(t->mods[i].syms[j].demangled);
		}
		free(t->mods[i].syms);
		free(t->mods[i].path);
	}
	free(t->mods);
	memset(t, 0, sizeof(*t));
}
