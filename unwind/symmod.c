/* symmod: find a module's ELF and debug file, then index them (see symmod.h). */
#include "symmod.h"
#include "dbgcache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dbgfetch.h"
#include "dbgindex.h"
#include "debugfile.h"

void symmod_free(struct symmod *m)
{
	if (!m)
		return;
	free(m->path);
	free(m->segs);
	symtab_index_free(&m->syms);
	dwindex_free(&m->dw);
	elffile_close(&m->dwfile);
	strpool_free(&m->pool);
	free(m);
}

static int has_dwarf(Elf *elf)
{
	return symelf_has_section(elf, ".debug_info") || symelf_has_section(elf, ".zdebug_info");
}

/* Opens path when it is an ELF file whose build id is the wanted one. */
static int open_checked(const struct symmod_req *r, const char *path, struct elffile *f,
			char *err, size_t errlen)
{
	uint8_t id[SYM_BUILD_ID_MAX];
	size_t len;

	if (elffile_open(f, path) < 0) {
		snprintf(err, errlen, "cannot open '%s' as ELF", path);
		return -1;
	}
	if (r->build_id_len) {
		len = symelf_build_id(f->elf, id);
		if (len != r->build_id_len || memcmp(id, r->build_id, len) != 0) {
			snprintf(err, errlen, "'%s' has a different build id", path);
			elffile_close(f);
			return -1;
		}
	}
	return 0;
}

/* After the local searches failed: the debuginfod server's debug file, when --debuginfod
 * was given and the module has a build id. */
static int
open_fetched(const struct symmod_req *r, const uint8_t *id, size_t len, struct elffile *f)
{
	struct symmod_req want = *r;
	char *path, err[300];
	int rc;

	if (!r->fetch || len < 2 || !(path = dbgfetch_debuginfo(r->fetch, id, len)))
		return -1;
	want.build_id = id;
	want.build_id_len = len;
	rc = open_checked(&want, path, f, err, sizeof(err));
	free(path);
	return rc;
}

/* The module's own ELF: the build-id cache, the path, or (by build id) a debug file. */
static int open_main(const struct symmod_req *r, struct elffile *f, char *err, size_t errlen)
{
	char hex[2 * SYM_BUILD_ID_MAX + 1], path[4096];
	int have_id = r->build_id_len >= 2 && r->build_id_len <= SYM_BUILD_ID_MAX;

	if (have_id)
		build_id_hex(r->build_id, r->build_id_len, hex);
	if (have_id && r->cache_dir &&
	    (size_t)snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s", r->cache_dir, hex,
			     hex + 2) < sizeof(path) &&
	    open_checked(r, path, f, err, errlen) == 0)
		return 0;
	if (r->path && open_checked(r, r->path, f, err, errlen) == 0)
		return 0;
	if (have_id) {
		struct debugfile_query q = { .path = r->path, .build_id = r->build_id,
					     .build_id_len = r->build_id_len, .dirs = r->dirs,
					     .ndirs = r->ndirs };
		if (debugfile_find(&q, f) == 0 ||
		    open_fetched(r, r->build_id, r->build_id_len, f) == 0)
			return 0;
	}
	if (!r->path && !have_id)
		snprintf(err, errlen, "module has neither a path nor a build id");
	return -1;
}

/* Whether the copy's index (dbgindex.h) fits the copy: the units listed from its
 * .debug_info, the functions' names in its string table. */
static int index_fits(const struct dbgindex *ix, Elf *elf, int dwarf, int symtab)
{
	Elf_Scn *scn;
	GElf_Shdr sh;

	if (dwarf && ix->ninfo != dwindex_info_size(elf))
		return 0;
	return !symtab || !ix->nfuncs ||
	       ((scn = elf_getscn(elf, ix->strndx)) && gelf_getshdr(scn, &sh) &&
		sh.sh_type == SHT_STRTAB && sh.sh_size == ix->strsize);
}

/* The functions of syms into ix, names as offsets in its one string table; nothing when
 * they point into more than one.  0, or -1 when out of memory. */
static int index_funcs(struct dbgindex *ix, const struct symtab_index *syms)
{
	if (syms->nstrs != 1 || !syms->n)
		return 0;
	if (!(ix->funcs = malloc(syms->n * sizeof(*ix->funcs))))
		return -1;
	for (size_t i = 0; i < syms->n; i++) {
		size_t off = (size_t)(syms->v[i].sys - syms->strs[0]);
		if (off >= syms->str0_size) {
			free(ix->funcs);
			ix->funcs = NULL;
			return 0;
		}
		ix->funcs[i] = (struct dbgix_func){ syms->v[i].lo, syms->v[i].hi, (uint32_t)off };
	}
	ix->nfuncs = syms->n;
	ix->strndx = syms->str0_scn;
	ix->strsize = syms->str0_size;
	return 0;
}

/* Adds what the module's ELF lacks (DWARF, .symtab) from its separate debug file. */
static int index_debugfile(const struct symmod_req *r, struct symmod *m, Elf *main_elf,
			   int need_dwarf, int need_symtab, int *got_symtab)
{
	struct debugfile_query q = { .path = r->path ? r->path : m->path,
				     .build_id = m->build_id, .build_id_len = m->build_id_len,
				     .dirs = r->dirs, .ndirs = r->ndirs };
	struct elffile dbg;
	struct dbgindex in = { 0 }, out = { 0 };
	struct dwindex_keep keep = { r->dbgcache, m->build_id, m->build_id_len, 0, 0, NULL, &out };
	struct dwindex_keep *kp = NULL;
	struct stat st;
	int rc = 0;

	q.debuglink = symelf_debuglink(main_elf, &q.crc);
	/* The inflated copy of a debug file found before (dbgcache.h); by build id only. */
	if (dbgcache_lookup(r->dbgcache, m->build_id, m->build_id_len, &dbg) == 0) {
		if (fstat(dbg.fd, &st) == 0) {
			keep.copy_size = (uint64_t)st.st_size;
			kp = &keep;
		}
	} else {
		/* A fetched file stays in debuginfod's private cache of this run alone. */
		if (debugfile_find(&q, &dbg) == 0) {
			keep.store_copy = 1;
			kp = r->dbgcache && m->build_id_len ? &keep : NULL;
		} else if (open_fetched(r, m->build_id, m->build_id_len, &dbg) < 0) {
			return 0;	/* not finding one is normal: stay with what we have */
		}
	}
	int dwarf = need_dwarf && has_dwarf(dbg.elf);
	int symtab = need_symtab && symelf_has_section(dbg.elf, ".symtab");
	/* What an earlier run learnt of the copy (dbgindex.h), if it fits the copy whole; else
	 * it is learnt again, and kept. */
	if (kp && !keep.store_copy &&
	    dbgcache_index_load(r->dbgcache, m->build_id, m->build_id_len, keep.copy_size,
				&in) == 0) {
		if (index_fits(&in, dbg.elf, dwarf, symtab))
			keep.in = &in;
		else
			dbgindex_free(&in);
	}
	out.copy_size = keep.copy_size;
	if (dwarf)
		rc = dwindex_build(&m->dw, dbg.elf, &m->pool, kp);
	if (rc == 0 && symtab) {
		if (!keep.in || !in.nfuncs ||
		    symtab_index_from(&m->syms, dbg.elf, in.funcs, in.nfuncs, in.strndx,
				      in.strsize) < 0) {
			rc = symtab_index_build(&m->syms, dbg.elf);
			if (rc == 0 && kp && !keep.in)
				rc = index_funcs(&out, &m->syms);
		}
		*got_symtab = rc == 0;
	}
	if (rc == 0 && kp && !keep.in && out.copy_size && (out.nunits || out.nfuncs))
		dbgcache_index_store(r->dbgcache, m->build_id, m->build_id_len, &out);
	dbgindex_free(&in);
	dbgindex_free(&out);
	if (rc == 0 && m->dw.dwarf)
		m->dwfile = dbg;	/* read again as lookups reach new units */
	else
		elffile_close(&dbg);
	return rc;
}

static int index_module(const struct symmod_req *r, struct symmod *m, Elf *elf)
{
	int dwarf = has_dwarf(elf), symtab = symelf_has_section(elf, ".symtab"), got = 0;

	if ((dwarf && dwindex_build(&m->dw, elf, &m->pool, NULL) < 0) ||
	    (!(dwarf && symtab) && index_debugfile(r, m, elf, !dwarf, !symtab, &got) < 0))
		return -1;
	/* The module's own symbols (.symtab, else .dynsym) unless its debug file's .symtab
	 * took their place: a stripped library's .dynsym is not read for nothing. */
	return got ? 0 : symtab_index_build(&m->syms, elf);
}

struct symmod *symmod_open(const struct symmod_req *r, char *err, size_t errlen)
{
	struct elffile f;
	struct symmod *m;

	snprintf(err, errlen, "cannot find module '%s'", r->path ? r->path : "?");
	if (open_main(r, &f, err, errlen) < 0)
		return NULL;
	if ((m = calloc(1, sizeof(*m))))
		m->dwfile.fd = -1;
	if (!m || !(m->path = strdup(f.path))) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	strpool_init(&m->pool);
	m->build_id_len = symelf_build_id(f.elf, m->build_id);
	if ((m->nsegs = symelf_segments(f.elf, &m->segs)) <= 0) {
		snprintf(err, errlen, "'%s' has no loadable segments", f.path);
		goto fail;
	}
	if (index_module(r, m, f.elf) < 0) {
		snprintf(err, errlen, "out of memory indexing '%s'", f.path);
		goto fail;
	}
	if (m->dw.dwarf && !m->dwfile.elf)
		m->dwfile = f;	/* the module's own DWARF, read again as lookups need it */
	else
		elffile_close(&f);
	return m;
fail:
	symmod_free(m);
	elffile_close(&f);
	return NULL;
}
