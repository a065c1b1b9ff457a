/* symbolize: the module cache and the lookup that assembles frames (see symbolize.h). */
#include "symbolize.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "debugfile.h"
#include "demangle.h"
#include "symdwarf.h"
#include "symelf.h"
#include "symmod.h"

struct cache_ent {
	char *key;		/* "b" + hex build id, or "p" + path */
	uint32_t hash;
	struct symmod *mod;	/* NULL: opening failed ... */
	char *err;		/* ... for this reason */
};

struct symbolizer {
	char **dirs;		/* symbol dirs, then the module cache dir */
	size_t ndirs;
	char *cache_dir;
	struct cache_ent *ents;
	size_t nents, cap;
	char err[512];
	struct dbgfetch *fetch;
	struct dbgcache *dbgcache;
};

struct symbolizer *symbolizer_new(const char *const *symbol_dirs, size_t ndirs,
				  const char *module_cache_dir)
{
	struct symbolizer *s = calloc(1, sizeof(*s));

	if (!s || !(s->dirs = calloc(ndirs + 1, sizeof(char *))))
		goto fail;
	for (size_t i = 0; i < ndirs; i++) {
		if (symbol_dirs[i] && !(s->dirs[s->ndirs++] = strdup(symbol_dirs[i])))
			goto fail;
	}
	if (module_cache_dir) {
		if (!(s->cache_dir = strdup(module_cache_dir)) ||
		    !(s->dirs[s->ndirs++] = strdup(module_cache_dir)))
			goto fail;
	}
	return s;
fail:
	symbolizer_free(s);
	return NULL;
}

void symbolizer_free(struct symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->cap; i++) {
		free(s->ents[i].key);
		free(s->ents[i].err);
		symmod_free(s->ents[i].mod);
	}
	free(s->ents);
	for (size_t i = 0; i < s->ndirs; i++)
		free(s->dirs[i]);
	free(s->dirs);
	free(s->cache_dir);
	free(s);
}

void symbolizer_set_fetch(struct symbolizer *s, struct dbgfetch *f)
{
	s->fetch = f;
}

void symbolizer_set_dbgcache(struct symbolizer *s, struct dbgcache *c)
{
	s->dbgcache = c;
}

const char *symbolizer_error(struct symbolizer *s)
{
	return s->err[0] ? s->err : "no error";
}

const char *symmod_path(const struct symmod *m)
{
	return m->path;
}

int symmod_has_dwarf(const struct symmod *m)
{
	return m->dw.has_dwarf;
}

int symmod_offset_to_vaddr(struct symmod *m, uint64_t off, uint64_t *vaddr)
{
	for (int i = 0; i < m->nsegs; i++) {
		const struct symseg *g = &m->segs[i];
		if (off >= g->offset && off - g->offset < g->size) {
			*vaddr = off - g->offset + g->vaddr;
			return 0;
		}
	}
	return -1;
}

static uint32_t key_hash(const char *k)
{
	uint32_t h = 2166136261u;

	for (; *k; k++)
		h = (h ^ (unsigned char)*k) * 16777619u;
	return h;
}

static int cache_grow(struct symbolizer *s)
{
	size_t cap = s->cap ? s->cap * 2 : 64;
	struct cache_ent *e = calloc(cap, sizeof(*e));

	if (!e)
		return -1;
	for (size_t i = 0; i < s->cap; i++) {
		if (!s->ents[i].key)
			continue;
		size_t j = s->ents[i].hash & (cap - 1);
		while (e[j].key)
			j = (j + 1) & (cap - 1);
		e[j] = s->ents[i];
	}
	free(s->ents);
	s->ents = e;
	s->cap = cap;
	return 0;
}

static char *make_key(const char *path, const uint8_t *id, size_t len)
{
	char *k;

	if (len > 0 && len <= SYM_BUILD_ID_MAX) {
		if ((k = malloc(2 * len + 2))) {
			k[0] = 'b';
			build_id_hex(id, len, k + 1);
		}
		return k;
	}
	if (!path || asprintf(&k, "p%s", path) < 0)
		return NULL;
	return k;
}

struct symmod *symbolizer_module(struct symbolizer *s, const char *path,
				 const uint8_t *build_id, size_t build_id_len)
{
	char *key = make_key(path, build_id, build_id ? build_id_len : 0);

	if (!key) {
		snprintf(s->err, sizeof(s->err), path ? "out of memory" : "module has no path");
		return NULL;
	}
	if ((s->nents + 1) * 2 > s->cap && cache_grow(s) < 0) {
		free(key);
		snprintf(s->err, sizeof(s->err), "out of memory");
		return NULL;
	}
	uint32_t h = key_hash(key);
	size_t j = h & (s->cap - 1);
	for (; s->ents[j].key; j = (j + 1) & (s->cap - 1)) {
		struct cache_ent *e = &s->ents[j];
		if (e->hash == h && strcmp(e->key, key) == 0) {
			free(key);
			if (!e->mod)
				snprintf(s->err, sizeof(s->err), "%s", e->err ? e->err : "?");
			return e->mod;
		}
	}

	struct symmod_req r = { .path = path, .build_id = build_id,
				.build_id_len = build_id ? build_id_len : 0,
				.cache_dir = s->cache_dir, .dirs = (const char *const *)s->dirs,
				.ndirs = s->ndirs, .fetch = s->fetch,
				.dbgcache = s->dbgcache };
	struct cache_ent *e = &s->ents[j];
	e->key = key;
	e->hash = h;
	e->mod = symmod_open(&r, s->err, sizeof(s->err));
	e->err = e->mod ? NULL : strdup(s->err);
	s->nents++;
	return e->mod;
}

/* The readable name of sys, demangled once and remembered in *name; plain (DW_AT_name, may
 * be NULL) is shown for a linkage name that is not a mangled one (a C asm label). */
static const char *lazy_name(struct symmod *m, const char *sys, const char *plain,
			     const char **name)
{
	if (!*name) {
		char *d = sym_demangle(sys);
		const char *p = d ? strpool_cstr(&m->pool, d) : NULL;
		free(d);
		*name = p ? p : plain ? plain : sys;
	}
	return *name;
}

/* Fills *f with the physical function at vaddr: DWARF first, then the symbol tables.
 * row_addr is the address of the line row that gave f's file:line. */
static int physical_frame(struct symmod *m, uint64_t vaddr, uint64_t row_addr,
			  struct symframe *f)
{
	int64_t fi = dwindex_func(&m->dw, vaddr);
	struct symfunc *sym;

	if (fi >= 0 && m->dw.descs[fi].sys) {
		struct dwdesc *d = &m->dw.descs[fi];
		f->name = lazy_name(m, d->sys, d->plain, &d->name);
		f->system_name = d->sys;
		f->start_line = d->decl_line;
		return 0;
	}
	if ((sym = symtab_index_find(&m->syms, vaddr))) {
		f->name = lazy_name(m, sym->sys, NULL, &sym->name);
		f->system_name = sym->sys;
		f->start_line = 0;
		/* libdw orders a sequence's last zero-length row after its end marker, so the
		 * row can seem to run on into the next, DWARF-less function (_start after main):
		 * a row before the symbol's start cannot describe its code. */
		if (row_addr < sym->lo) {
			f->file = NULL;
			f->line = 0;
		}
		return 0;
	}
	return -1;
}

int symmod_lookup(struct symmod *m, uint64_t vaddr, struct symframe *out, int max)
{
	const char *file = NULL;
	uint32_t line = 0;
	uint64_t row = 0;
	int64_t node;
	int n = 0;

	if (!m || max <= 0 || dwindex_prepare(&m->dw, vaddr) < 0)
		return 0;
	node = dwindex_inline(&m->dw, vaddr);
	if (dwindex_line(&m->dw, vaddr, &file, &line, &row) < 0)
		file = NULL;
	/* Each inlined frame's position is its own line-table row (innermost) or the call site
	 * recorded in the frame it inlined into; the walk continues past max so the physical
	 * frame still gets the outermost call site. */
	while (node >= 0) {
		struct dwinline *in = &m->dw.inl[node];
		if (n < max - 1 && in->desc < m->dw.ndescs) {
			struct dwdesc *d = &m->dw.descs[in->desc];
			out[n++] = (struct symframe){
				.name = d->sys ? lazy_name(m, d->sys, d->plain, &d->name) : "??",
				.system_name = d->sys ? d->sys : "??",
				.file = file, .line = line, .start_line = d->decl_line,
			};
		}
		file = in->call_file;
		line = in->call_line;
		node = in->parent < node ? in->parent : -1;	/* parents precede children */
	}
	out[n] = (struct symframe){ .file = file, .line = line };
	if (physical_frame(m, vaddr, row, &out[n]) < 0) {
		if (n == 0)
			return 0;
		out[n].name = out[n].system_name = "??";
	}
	return n + 1;
}

int symmod_func_range(struct symmod *m, uint64_t vaddr, uint64_t *lo, uint64_t *hi)
{
	struct symfunc *sym;

	if (!m || dwindex_prepare(&m->dw, vaddr) < 0)
		return -1;
	/* The symbol's start first: the profiler takes it as the function's address. */
	if ((sym = symtab_index_find(&m->syms, vaddr))) {
		*lo = sym->lo;
		*hi = sym->hi;
		return 0;
	}
	return dwindex_func_range(&m->dw, vaddr, lo, hi) >= 0 ? 0 : -1;
}

int symmod_vaddr_to_offset(struct symmod *m, uint64_t vaddr, uint64_t *off, uint64_t *avail)
{
	for (int i = 0; i < m->nsegs; i++) {
		const struct symseg *g = &m->segs[i];
		if (vaddr >= g->vaddr && vaddr - g->vaddr < g->size) {
			*off = vaddr - g->vaddr + g->offset;
			*avail = g->size - (vaddr - g->vaddr);
			return 0;
		}
	}
	return -1;
}
