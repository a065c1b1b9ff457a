/* symdwarf: a compact, address-sorted index of one module's DWARF.
 *
 * Asking libdw per address (dwarf_addrdie, dwarf_getscopes, dwarf_getsrc_die) re-walks DIE
 * trees on every lookup and is tens of times slower than the best symbolizers.  Instead each
 * compilation unit is walked once and reduced to four flat arrays; a lookup is then three
 * binary searches and a walk up a parent chain.  A unit is walked the first time a lookup
 * falls in its address ranges (.debug_aranges, else the unit's own ranges; a unit without
 * known ranges when the module is opened): a profile touches a few of the thousands of
 * units of a big debug file.  libdw stays open until every unit is indexed; every string
 * the index keeps is copied into the module's string pool.
 *
 *   funcs  [lo, hi) of every concrete function range (DW_AT_low_pc/high_pc or DW_AT_ranges),
 *          pointing at a name descriptor
 *   segs   disjoint [lo, hi) pieces of code each mapped to the innermost inlined subroutine
 *          covering it (nested inline ranges are flattened when their function is indexed)
 *   inl    one node per DW_TAG_inlined_subroutine: its name descriptor, its parent node
 *          (-1: directly in the function) and the call site DW_AT_call_file/call_line
 *   lines  every line table row of the indexed CUs merged into one array sorted by address
 */
#ifndef RP_SYMDWARF_H
#define RP_SYMDWARF_H

#include <stddef.h>
#include <stdint.h>

#include <elfutils/libdw.h>
#include <libelf.h>

#include "symaddr.h"
#include "symstr.h"

struct dwdesc {
	const char *sys;	/* linkage name, else DW_AT_name; NULL when unnamed */
	const char *plain;	/* DW_AT_name (C asm labels like glibc's __GI_x differ) */
	const char *name;	/* demangled, filled on first use */
	uint32_t decl_line;	/* DW_AT_decl_line, 0 when unknown */
};

struct dwrange {
	uint64_t lo, hi;
	uint32_t id;		/* funcs: descriptor index; segs: inline node index */
	uint32_t cu;		/* the unit's position in .debug_info: orders equal ranges */
};

struct dwinline {
	uint32_t desc;
	int32_t parent;
	const char *call_file;
	uint32_t call_line;
};

#define DWLINE_END UINT32_MAX	/* file value of an end_sequence row: no line here */

struct dwline {
	uint64_t addr;
	uint32_t file;		/* index into files[], or DWLINE_END */
	uint32_t line;
	uint32_t cu;		/* as in struct dwrange */
};

struct dwlazy;

struct dwindex {
	struct dwdesc *descs;
	struct dwrange *funcs, *segs;
	struct dwinline *inl;
	struct dwline *lines;
	const char **files;
	size_t ndescs, nfuncs, nsegs, ninl, nlines, nfiles;
	size_t cdescs, cfuncs, csegs, cinl, clines, cfiles;	/* capacities */
	struct addrix xfuncs, xsegs, xlines;	/* bucket indexes of the sorted arrays */
	/* Units whose address ranges are known are indexed on the first lookup that falls in
	 * them (see dwindex_prepare): a big debug file costs only what the profile touches.
	 * The arrays always hold exactly what a full walk would give for the units indexed,
	 * in the same order. */
	Dwarf *dwarf;		/* open while a unit is still to be indexed */
	struct dwlazy *lazy;
	int has_dwarf;		/* some unit has code or lines */
};

struct dbgcache;
/* Where the inflated sections of a file go (dbgcache.h), as the copy of this build id. */
struct dwindex_keep {
	struct dbgcache *cache;
	const uint8_t *build_id;
	size_t build_id_len;
	/* 1: elf is the original debug file, whose inflated sections become the copy; 0: elf
	 * is the copy, of copy_size bytes. */
	int store_copy;
	uint64_t copy_size;
	/* The copy's index (dbgindex.h), its units already checked against elf
	 * (dwindex_info_size): they are taken from there.  Else NULL, and the units listed go
	 * into out when out is not NULL, with the copy's size. */
	const struct dbgindex *in;
	struct dbgindex *out;
};

/* Indexes the DWARF of elf (which stays owned by the caller, and open until dwindex_free
 * when idx->dwarf is set: units are then indexed lazily).  When keep is not NULL and
 * sections had to be inflated, the file as inflated is stored in keep's cache.  Returns 0
 * (possibly with empty arrays when there is no usable DWARF), -1 when out of memory. */
int dwindex_build(struct dwindex *, Elf *elf, struct strpool *, const struct dwindex_keep *keep);
/* The size of elf's .debug_info as libdw reads it (inflated), or 0: what an index's units
 * were listed from. */
uint64_t dwindex_info_size(Elf *elf);
/* Indexes the units whose ranges hold addr, if not done yet; call before the lookups
 * below.  0, or -1 when out of memory. */
int dwindex_prepare(struct dwindex *, uint64_t addr);
void dwindex_free(struct dwindex *);

/* Descriptor index of the function containing addr, or -1. */
int64_t dwindex_func(const struct dwindex *, uint64_t addr);
/* The same, with the address range of the function that holds addr. */
int64_t dwindex_func_range(const struct dwindex *, uint64_t addr, uint64_t *lo,
			   uint64_t *hi);
/* Innermost inline node containing addr, or -1. */
int64_t dwindex_inline(const struct dwindex *, uint64_t addr);
/* File and line of addr from the line table, and the address of the row giving them; 0 when
 * found, -1 otherwise. */
int dwindex_line(const struct dwindex *, uint64_t addr, const char **file, uint32_t *line,
		 uint64_t *row_addr);

/* Internal to symdwarf.c / symline.c. */
int dwindex_grow(void **v, size_t *cap, size_t n, size_t esz);
int dwindex_add_lines(struct dwindex *, Dwarf_Die *cudie, uint32_t cu, struct strpool *);
/* Sorts lines[from..nlines) and merges them into the sorted lines[0..from). */
int dwindex_sort_lines(struct dwindex *, size_t from);

#endif
