/*
 * dbgcache: a directory of separate debug files kept with their DWARF inflated, named by
 * build id (DIR/<hex build id>.debug), so that a later run maps them instead of inflating
 * them again.  A distribution's debug file compresses its DWARF: libc6-dbg's 4 MiB hold
 * 8.6 MiB of the sections the symbolizer reads, and inflating them is most of a recording's
 * start-up in unwind (docs/debug-cache.md).
 *
 * A cached file is the original's sections with the compressed .debug_* ones inflated and
 * the ones the symbolizer never reads (location lists, macros) left out as SHT_NOBITS.  It
 * is only a faster copy: a file that is missing, unreadable, not ELF or of another build id
 * is a miss, and the original is read (and the copy written again).  Files are written to
 * a temporary name and renamed, so concurrent runs see whole files; the directory is kept
 * under its byte limit by removing the files least recently used first.
 */
#ifndef RP_DBGCACHE_H
#define RP_DBGCACHE_H

#include <stddef.h>
#include <stdint.h>

#include <libelf.h>

#include "debugfile.h"

struct dbgcache;

/* Creates dir (mode 0700, its parents too) when missing.  max_bytes: what the directory
 * may hold.  NULL with a one-line reason in err. */
struct dbgcache *dbgcache_open(const char *dir, uint64_t max_bytes, char *err, size_t errlen);
void dbgcache_free(struct dbgcache *);	/* accepts NULL */

/* Opens the cached copy of this build id into *out (and marks it used).  0, or -1 on a
 * miss. */
int dbgcache_lookup(struct dbgcache *, const uint8_t *build_id, size_t len,
		    struct elffile *out);

/* Writes elf (an opened debug file whose sections the symbolizer has inflated in memory,
 * symdwarf.h) as the copy of this build id, then removes the least recently used files
 * while the directory holds more than its limit.  A copy larger than the limit is not
 * written.  The copy's size, or 0 when it was not written: failures are counted, never
 * fatal. */
uint64_t dbgcache_store(struct dbgcache *, const uint8_t *build_id, size_t len, Elf *elf);

struct dbgindex;
/* The index kept beside the copy of this build id (dbgindex.h), for a copy of copy_size
 * bytes: 0 and *ix, or -1 on a miss. */
int dbgcache_index_load(struct dbgcache *, const uint8_t *build_id, size_t len,
			uint64_t copy_size, struct dbgindex *ix);
/* Writes ix beside the copy of this build id (to a temporary name, then renamed); the
 * eviction of the copy removes it too.  Failures are counted, never fatal. */
void dbgcache_index_store(struct dbgcache *, const uint8_t *build_id, size_t len,
			  const struct dbgindex *ix);

struct dbgcache_stats {
	uint64_t hits, misses, stored, failed, evicted;
};
const struct dbgcache_stats *dbgcache_stats(const struct dbgcache *);

#endif
