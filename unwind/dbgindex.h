/*
 * dbgindex: what unwind learns at every start from a cached debug file's DWARF, kept beside
 * the copy (DIR/<hex build id>.index, dbgcache.h) so that a later run reads it instead: the
 * compile and partial units (their DIEs' offsets), how each is indexed (on the first lookup
 * in its address ranges, at once, or never: no code), and those ranges, sorted.  Listing
 * them reads a header in every unit of .debug_info (libc6-dbg: 2,063 units over 4.9 MB of
 * the mapped copy, about a millisecond); the index is 80 KB.
 *
 * The file is unwind's own but lives in a directory anyone running unwind may write to, so
 * it is read as untrusted: any length, count, offset, order or state that does not fit the
 * copy it claims to describe (its size, its .debug_info's size) makes it a miss, and the
 * units are listed from the DWARF as before (and the index written again).
 *
 * Layout (little-endian): "RPDBGIX1", u64 copy size, u64 .debug_info size, u32 nunits,
 * u32 nranges, u64 die[nunits], u8 state[nunits] padded to 8 bytes, then nranges times
 * u64 lo, u64 hi, u32 unit, u32 0.
 */
#ifndef RP_DBGINDEX_H
#define RP_DBGINDEX_H

#include <stddef.h>
#include <stdint.h>

/* How a unit is indexed (the states of dwlazy, symdwarf.c). */
enum { DBGIX_LAZY = 0, DBGIX_NONE = 1, DBGIX_EAGER = 2 };

#define DBGIX_MAX_UNITS (1u << 24)
#define DBGIX_MAX_RANGES (1u << 26)

struct dbgix_range {
	uint64_t lo, hi;
	uint32_t unit;
};

struct dbgindex {
	uint64_t copy_size, ninfo;
	uint64_t *dies;
	uint8_t *state;
	size_t nunits;
	struct dbgix_range *ranges; /* by lo, then unit */
	size_t nranges;
};

/* Reads the index at path for a copy of copy_size bytes whose .debug_info has ninfo: 0 and
 * *ix (to dbgindex_free), or -1 when it is missing, unreadable or does not fit. */
int dbgindex_read(const char *path, uint64_t copy_size, uint64_t ninfo, struct dbgindex *ix);
/* The same from bytes (tests, fuzz/debug_cache.c). */
int dbgindex_parse(const uint8_t *p, size_t len, uint64_t copy_size, uint64_t ninfo,
		   struct dbgindex *ix);
/* The file's bytes for ix: malloc'ed, *len set; NULL when out of memory or too big. */
uint8_t *dbgindex_encode(const struct dbgindex *ix, size_t *len);
void dbgindex_free(struct dbgindex *ix);

#endif
