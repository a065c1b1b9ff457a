/* cficache: one CFI table per module, built on first use (see cfi.h). */
#include "cfi.h"

#include <stdlib.h>
#include <string.h>

#include "debugfile.h"
#include "symelf.h"
#include "symbolize.h"
#include "symmod.h"

struct cfi_ent {
	const struct symmod *mod;	/* NULL: a free slot */
	struct cfitab *tab;
};

struct cfi_cache {
	char **dirs;
	size_t ndirs;
	struct cfi_ent *ents;
	size_t n, cap;			/* cap is a power of two */
};

struct cfi_cache *cfi_cache_new(const char *const *dirs, size_t ndirs)
{
	struct cfi_cache *c = calloc(1, sizeof(*c));

	if (!c || !(c->dirs = calloc(ndirs + 1, sizeof(char *))))
		goto fail;
	for (size_t i = 0; i < ndirs; i++)
		if (dirs[i] && !(c->dirs[c->ndirs++] = strdup(dirs[i])))
			goto fail;
	return c;
fail:
	cfi_cache_free(c);
	return NULL;
}

void cfi_cache_free(struct cfi_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->cap; i++)
		cfitab_free(c->ents[i].tab);
	free(c->ents);
	for (size_t i = 0; i < c->ndirs; i++)
		free(c->dirs[i]);
	free(c->dirs);
	free(c);
}

static size_t slot_of(const struct symmod *m, size_t cap)
{
	uint64_t h = (uint64_t)(uintptr_t)m * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 32) & (cap - 1);
}

static int grow(struct cfi_cache *c)
{
	size_t cap = c->cap ? c->cap * 2 : 32;
	struct cfi_ent *e = calloc(cap, sizeof(*e));

	if (!e)
		return -1;
	for (size_t i = 0; i < c->cap; i++) {
		if (!c->ents[i].mod)
			continue;
		size_t j = slot_of(c->ents[i].mod, cap);
		while (e[j].mod)
			j = (j + 1) & (cap - 1);
		e[j] = c->ents[i];
	}
	free(c->ents);
	c->ents = e;
	c->cap = cap;
	return 0;
}

/* The module's own file first; a stripped module's .debug_frame may be in its debug file. */
static struct cfitab *build(struct cfi_cache *c, struct symmod *m)
{
	struct elffile f, dbg;
	struct cfitab *t = NULL, *t2;

	if (elffile_open(&f, symmod_path(m)) < 0)
		return cfitab_from_section(0, NULL, 0, 0, 1);	/* an empty table */
	if (!(t = cfitab_build(f.elf)) || cfitab_has_rows(t)) {
		elffile_close(&f);
		return t;
	}
	struct debugfile_query q = { .path = symmod_path(m), .build_id = m->build_id,
				     .build_id_len = m->build_id_len,
				     .dirs = (const char *const *)c->dirs, .ndirs = c->ndirs };
	q.debuglink = symelf_debuglink(f.elf, &q.crc);
	if (debugfile_find(&q, &dbg) == 0) {
		if ((t2 = cfitab_build(dbg.elf)) && cfitab_has_rows(t2)) {
			cfitab_free(t);
			t = t2;
			t->source = "debug file .debug_frame";
		} else {
			cfitab_free(t2);
		}
		elffile_close(&dbg);
	}
	elffile_close(&f);
	return t;
}

const struct cfitab *cfi_cache_get(struct cfi_cache *c, struct symmod *m)
{
	if ((c->n + 1) * 2 > c->cap && grow(c) < 0)
		return NULL;
	size_t j = slot_of(m, c->cap);
	for (; c->ents[j].mod; j = (j + 1) & (c->cap - 1))
		if (c->ents[j].mod == m)
			return c->ents[j].tab;
	struct cfitab *t = build(c, m);
	if (!t)
		return NULL;
	c->ents[j] = (struct cfi_ent){ m, t };
	c->n++;
	return t;
}

void cfi_cache_stats(const struct cfi_cache *c, size_t *tables, size_t *rows, size_t *bytes)
{
	*tables = *rows = *bytes = 0;
	for (size_t i = 0; i < c->cap; i++) {
		if (!c->ents[i].tab)
			continue;
		++*tables;
		*rows += cfitab_rows(c->ents[i].tab);
		*bytes += cfitab_bytes(c->ents[i].tab);
	}
}
