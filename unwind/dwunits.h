/*
 * dwunits: the compile and partial units of .debug_info and the address ranges
 * .debug_aranges gives them, read from the sections' bytes.  libdw's own list of units
 * (dwarf_get_units, and dwarf_getaranges, which finds each set's unit) reads every unit's
 * header into a search tree and its first DIE's abbreviation: for a libc debug file, 2,000
 * units and some 8 million instructions at every start, though a recording's stacks reach
 * a few of them.  Here a unit is an offset until a stack reaches it; libdw reads it then
 * (dwarf_offdie).  The units listed are those dwarf_get_units calls DW_UT_compile or
 * DW_UT_partial, in .debug_info order.  Anything this reader does not know (a compressed
 * section, a malformed header, an unknown version) makes it decline, and the caller asks
 * libdw as before.
 */
#ifndef RP_DWUNITS_H
#define RP_DWUNITS_H

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

struct dwunit {
	uint64_t off;           /* the unit header's offset in .debug_info */
	uint64_t die;           /* its DIE's */
	uint64_t abbrev;        /* its abbreviations' offset in .debug_abbrev */
};

struct dwunits {
	struct dwunit *v;       /* ascending offsets */
	size_t n, cap;
	/* The sections, as the Elf holds them now (inflated: secinflate.h). */
	const uint8_t *info, *abbrev;
	size_t ninfo, nabbrev;
};

/* Lists the units.  0, 1 when this reader declines (u is empty then), -1 when out of
 * memory. */
int dwunits_list(Elf *elf, struct dwunits *u);
/* The ranges of .debug_aranges, each with the index of its unit: add(arg, lo, hi, unit)
 * (0, or -1 to stop with -1).  A set naming no listed unit is skipped.  0; 1 when the
 * section is missing or malformed (as dwarf_getaranges failing: no range is known then,
 * though add may have been called); -1 when add failed. */
int dwunits_aranges(Elf *elf, const struct dwunits *u,
		    int (*add)(void *arg, uint64_t lo, uint64_t hi, uint32_t unit), void *arg);
/* Whether unit i's DIE says where its code is (DW_AT_low_pc or DW_AT_ranges in its
 * abbreviation): 1 or 0, -1 when it cannot tell. */
int dwunits_has_code(const struct dwunits *u, size_t i);
void dwunits_free(struct dwunits *u);

#endif
