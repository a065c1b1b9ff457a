/* libFuzzer target: the debug cache (unwind/dbgcache.h) on arbitrary bytes, both ways.  The
 * input is a debug file found somewhere (a --symbol-dir holds what its user put there): it
 * is indexed with its sections inflated and written to the cache as an inflated copy; then
 * the input itself is planted as the cached copy of its build id, as a damaged or hostile
 * cache would hold it, looked up and indexed.  The copy written is looked up twice, its unit
 * index (unwind/dbgindex.h) written by the first and read by the second.  Nothing survives
 * an iteration: leaks show. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../unwind/dbgcache.h"
#include "../unwind/dbgindex.h"
#include "../unwind/symdwarf.h"
#include "../unwind/symelf.h"
#include "../unwind/symstr.h"

static char dir[64], input[96], cachedir[96];
static volatile size_t sink;

static void remove_all(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
}

/* Indexes f's DWARF and looks a few addresses up.  With c: f is an original whose inflated
 * sections are stored as the copy (copy 0), or the copy of copy bytes, whose unit index is
 * read from the cache when there is one that fits, else listed and written there. */
static void index_file(struct elffile *f, struct dbgcache *c, const uint8_t *id, size_t n,
		       uint64_t copy)
{
	struct strpool pool;
	struct dwindex idx;
	struct dbgindex in = { 0 }, out = { 0 };
	struct dwindex_keep keep = { c, id, n, copy == 0, copy, NULL, &out };

	if (c && copy && dbgcache_index_load(c, id, n, copy, &in) == 0 &&
	    in.ninfo == dwindex_info_size(f->elf))
		keep.in = &in;
	strpool_init(&pool);
	if (dwindex_build(&idx, f->elf, &pool, c ? &keep : NULL) == 0) {
		for (size_t k = 0; k < idx.nfuncs && k < 8; k++) {
			(void)dwindex_prepare(&idx, idx.funcs[k].lo);
			sink += (size_t)dwindex_func(&idx, idx.funcs[k].lo);
			sink += (size_t)dwindex_inline(&idx, idx.funcs[k].lo);
		}
		(void)dwindex_prepare(&idx, 0x1000);
		sink += (size_t)dwindex_func(&idx, 0x1000);
		dwindex_free(&idx);
	}
	if (c && copy && !keep.in && out.copy_size)
		dbgcache_index_store(c, id, n, &out);
	dbgindex_free(&in);
	dbgindex_free(&out);
	strpool_free(&pool);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t fixed[20] = { 0xde, 0xbc, 0x0c, 0xac, 0x4e };
	uint8_t id[SYM_BUILD_ID_MAX];
	size_t n = 0;
	char err[256];
	struct elffile f;

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/debug_cache.%d", (int)getpid());
		snprintf(input, sizeof(input), "%s/in.debug", dir);
		snprintf(cachedir, sizeof(cachedir), "%s/cache", dir);
		atexit(remove_all);
	}
	struct dbgcache *c = dbgcache_open(cachedir, 1u << 30, err, sizeof(err));
	FILE *o = fopen(input, "wb");
	if (!c || !o || fwrite(data, 1, size, o) != size || fclose(o) != 0)
		abort();
	if (elffile_open(&f, input) == 0) {
		n = symelf_build_id(f.elf, id);
		if (n < 2) {
			memcpy(id, fixed, sizeof(fixed));
			n = sizeof(fixed);
		}
		index_file(&f, c, id, n, 0);	/* writes the inflated copy when there is one */
		elffile_close(&f);
		/* The copy, twice: its unit index written, then read back. */
		for (int k = 0; k < 2 && dbgcache_lookup(c, id, n, &f) == 0; k++) {
			struct stat st;
			index_file(&f, c, id, n, fstat(f.fd, &st) == 0 ? (uint64_t)st.st_size : 1);
			elffile_close(&f);
		}
	}
	/* The input as the cache's copy of its build id: checked, then indexed if accepted. */
	if (n >= 2) {
		char hex[2 * SYM_BUILD_ID_MAX + 1], copy[256];
		build_id_hex(id, n, hex);
		snprintf(copy, sizeof(copy), "%s/%s.debug", cachedir, hex);
		if (rename(input, copy) == 0 && dbgcache_lookup(c, id, n, &f) == 0) {
			index_file(&f, NULL, NULL, 0, 0);
			elffile_close(&f);
		}
		unlink(copy);
	}
	sink += dbgcache_stats(c)->hits;
	dbgcache_free(c);
	return 0;
}
