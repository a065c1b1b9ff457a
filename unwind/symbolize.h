/* symbolize: addresses in ELF modules to function names, inlined frames and file:line.
 *
 * A symbolizer holds the search paths and a cache of modules; each module is opened and
 * indexed once (ELF symbols, DWARF functions, inline trees and line tables reduced to sorted
 * arrays, see symdwarf.h; a DWARF compilation unit the first time a lookup falls in it),
 * after which a lookup is a few binary searches.  Not thread-safe: one symbolizer per
 * thread.
 */
#ifndef RP_SYMBOLIZE_H
#define RP_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

struct symbolizer;	/* process-wide: search paths and module cache */

/* symbol_dirs (copied) are searched for debug files after the system locations, see
 * debugfile.h; module_cache_dir (may be NULL) holds ELF files and debug files by build id
 * (DIR/.build-id/xx/rest and DIR/.build-id/xx/rest.debug).  Returns NULL when out of
 * memory. */
struct symbolizer *symbolizer_new(const char *const *symbol_dirs, size_t ndirs,
				  const char *module_cache_dir);
void symbolizer_free(struct symbolizer *);	/* accepts NULL; frees every module */

struct dbgfetch;
/* Debug files not found locally are then asked of this debuginfod client (dbgfetch.h;
 * borrowed, NULL: none, the default: no network without --debuginfod). */
void symbolizer_set_fetch(struct symbolizer *, struct dbgfetch *);
struct dbgcache;
/* Separate debug files are looked up in, and their inflated copies kept in, this cache
 * (dbgcache.h; borrowed, NULL: none, the default). */
void symbolizer_set_dbgcache(struct symbolizer *, struct dbgcache *);

struct symmod;		/* one ELF module, opened once, owned by the symbolizer */

/* Opens (or returns the cached) module for this path and build id.  Looks for the ELF itself
 * at module_cache_dir/.build-id/xx/rest (when a build id is given), then path, then (with a
 * build id) the debug file locations, whose program headers still describe the module.
 * Returns NULL, with a reason in symbolizer_error, when nothing usable is found; a file whose
 * build id differs from the given one is not used.  Modules (and failures, so a missing file
 * is not retried for every frame) are cached by build id, or by path when there is none. */
struct symmod *symbolizer_module(struct symbolizer *, const char *path,
				 const uint8_t *build_id, size_t build_id_len);

/* File offset (as in a mapping: addr - map_start + pgoff) to the ELF virtual address using
 * the PT_LOAD segments.  Returns 0, or -1 if no segment holds it. */
int symmod_offset_to_vaddr(struct symmod *, uint64_t file_offset, uint64_t *vaddr);

struct symframe {
	const char *name;		/* demangled */
	const char *system_name;	/* as in the symbol table or DW_AT_linkage_name */
	const char *file;		/* NULL when unknown */
	uint32_t line;			/* 0 when unknown */
	uint32_t start_line;		/* DW_AT_decl_line, 0 when unknown */
};	/* strings are owned by the module and live until symbolizer_free */

/* Fills out[0..n) for the ELF virtual address, innermost inlined function first, the
 * physical function last; returns n (0 when no function is known there).  At most max
 * frames: a deeper inline chain loses its outer inlined frames, never the physical one. */
int symmod_lookup(struct symmod *, uint64_t vaddr, struct symframe *out, int max);

/* The address range [lo, hi) of the function holding vaddr (the symbol table's, else the
 * DWARF's): 0, or -1 when no function is known there. */
int symmod_func_range(struct symmod *, uint64_t vaddr, uint64_t *lo, uint64_t *hi);

/* ELF virtual address to file offset, and how many bytes of file backing follow it in its
 * segment: 0, or -1 when no PT_LOAD segment holds it. */
int symmod_vaddr_to_offset(struct symmod *, uint64_t vaddr, uint64_t *off, uint64_t *avail);

/* The reason the last symbolizer_module call returned NULL. */
const char *symbolizer_error(struct symbolizer *);

/* Path of the file the module was read from, and whether names came with DWARF. */
const char *symmod_path(const struct symmod *);
int symmod_has_dwarf(const struct symmod *);

#endif
