/*
 * dbgindex: what unwind learns at every start from a cached debug file, kept beside the
 * copy (DIR/<hex build id>.index, dbgcache.h) so that a later run reads it instead: the
 * compile and partial units (their DIEs' offsets), how each is indexed (on the first lookup
 * in its address ranges, at once, or never: no code), and those ranges, sorted; and the
 * functions of its .symtab as the symbol index holds them (sorted, one per address, with
 * their ends), each name an offset in the string table.  Listing the units reads a header
 * in every unit of .debug_info (libc6-dbg: 2,063 units over 4.9 MB of the mapped copy), and
 * indexing the symbols sorts and sifts 6,830 functions: together 1.5 to 2 ms at every
 * start.  The index is 158 KB.
 *
 * The file is unwind's own, but a cache directory outlives the runs that wrote it (a crash,
 * another version, a hand), so it is read as untrusted: any length, count, offset, order,
 * state or padding that does not hold together, or does not fit the copy it claims to
 * describe (the copy's size, its .debug_info's, its string table's: checked by the
 * caller), makes it a miss; the units and symbols are then read from the copy as before
 * (and the index written again).
 *
 * Layout (little-endian): "RPDBGIX2", u64 copy size, u64 .debug_info size (0: the copy has
 * no DWARF indexed), u32 nunits, u32 nranges, u32 nfuncs, u32 the string table's section
 * index, u64 its size, u64 die[nunits], u8 state[nunits] padded to 8 bytes, nranges times
 * (u64 lo, u64 hi, u32 unit, u32 0), then nfuncs times (u64 lo, u64 hi, u32 name, u32 0).
 * No functions (nfuncs 0) means they are not kept: the symbols are indexed from the copy.
 */
#ifndef RP_DBGINDEX_H
#define RP_DBGINDEX_H

#include <stddef.h>
#include <stdint.h>

/* How a unit is indexed (the states of dwlazy, symdwarf.c). */
enum { DBGIX_LAZY = 0, DBGIX_NONE = 1, DBGIX_EAGER = 2 };

#define DBGIX_MAX_UNITS (1u << 24)
#define DBGIX_MAX_RANGES (1u << 26)
#define DBGIX_MAX_FUNCS (1u << 24)

struct dbgix_range {
	uint64_t lo, hi;
	uint32_t unit;
};

struct dbgix_func {
	uint64_t lo, hi;
	uint32_t name;             /* offset in the string table */
};

struct dbgindex {
	uint64_t copy_size, ninfo;
	uint64_t *dies;
	uint8_t *state;
	size_t nunits;
	struct dbgix_range *ranges; /* by lo, then unit */
	size_t nranges;
	struct dbgix_func *funcs;   /* by lo, each lo once */
	size_t nfuncs;
	uint32_t strndx;            /* the functions' string table: its section, its size */
	uint64_t strsize;
};

/* Reads the index at path for a copy of copy_size bytes: 0 and *ix (to dbgindex_free), or -1
 * when it is missing, unreadable or does not hold together.  Whether it fits the copy's
 * sections (ninfo, strndx, strsize) is the reader's to check. */
int dbgindex_read(const char *path, uint64_t copy_size, struct dbgindex *ix);
/* The same from bytes (tests, fuzz/debug_index.c). */
int dbgindex_parse(const uint8_t *p, size_t len, uint64_t copy_size, struct dbgindex *ix);
/* The file's bytes for ix: malloc'ed, *len set; NULL when out of memory or too big. */
uint8_t *dbgindex_encode(const struct dbgindex *ix, size_t *len);
void dbgindex_free(struct dbgindex *ix);

#endif
