#include "ksymtab.h"

#include <stdlib.h>

int
ksymtab_add(struct ksymtab *t, const struct fr_ksym *k)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		struct ksym *s = realloc(t->syms, cap * sizeof(*s));
		if (!s)
			return -1;
		t->syms = s;
		t->cap = cap;
	}
	struct ksym s = { k->start, k->end, str_dup(k->name), str_dup(k->module) };
	if (!s.name || !s.module) {
		free(s.name);
		free(s.module);
		return -1;
	}
	t->syms[t->n++] = s;
	t->sorted = 0;
	return 0;
}

static int
cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

const struct ksym *
ksymtab_find(struct ksymtab *t, uint64_t addr)
{
	if (!t->sorted && t->n) {
		qsort(t->syms, t->n, sizeof(*t->syms), cmp);
		t->sorted = 1;
	}
	size_t lo = 0, hi = t->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (t->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	const struct ksym *s = &t->syms[lo - 1];
	return addr < s->end || s->end == s->start ? s : NULL;
}

void
ksymtab_release(struct ksymtab *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->syms[i].name);
		free(t->syms[i].module);
	}
	free(t->syms);
	t->syms = NULL;
	t->n = 0;
}
