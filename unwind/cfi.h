/*
 * cfi: a module's call frame information (.eh_frame, found through its section or through
 * .eh_frame_hdr, else .debug_frame, else the .debug_frame of its separate debug file) reduced
 * once to an address-sorted array of rows.  A row says, from its address up to the next
 * row's, how to find the canonical frame address (CFA), the return address and the caller's
 * frame pointer: the only registers a stack walk needs to go on.  Unwinding a frame is then
 * one binary search, a few additions and stack reads; no DWARF is interpreted per sample.
 *
 * Register numbers in rows are DWARF ones (x86_64: rbp 6, rsp 7, return address 16;
 * aarch64: x29 29, x30 30, sp 31).  Rules the walk cannot follow (a CFA based on another
 * register, an offset beyond 32 bits) become CFI_BAD rows: the walk stops there rather than
 * guess.  Every reader checks lengths, so corrupt bytes give fewer rows, never a crash.
 */
#ifndef RP_CFI_H
#define RP_CFI_H

#include <stddef.h>
#include <stdint.h>

#include <libelf.h>

/* How the CFA is found (struct cfirow.cfa). */
enum {
	CFA_NONE,	/* no FDE covers this address: a gap between functions */
	CFA_SP,		/* sp + cfa_off */
	CFA_FP,		/* frame register + cfa_off */
	CFA_EXPR,	/* DWARF expression at cfa_off in the table's pool */
	CFA_BAD,	/* a rule the walk cannot follow */
};

/* How a saved register is found (struct cfirow.ra and .fp). */
enum {
	REG_SAME,	/* unchanged by the callee (also the default) */
	REG_UNDEF,	/* undefined: for the return address, the outermost frame */
	REG_AT_CFA,	/* saved at cfa + off */
	REG_VAL_CFA,	/* the value is cfa + off */
	REG_AT_EXPR,	/* saved at the address the expression at off computes */
	REG_VAL_EXPR,	/* the value the expression at off computes */
	REG_BAD,	/* a rule the walk cannot follow */
};

struct cfirow {
	uint32_t addr;		/* start, relative to the table's base */
	uint8_t cfa, ra, fp;	/* CFA_*, REG_* */
	uint8_t pad;
	int32_t cfa_off, ra_off, fp_off;
};

struct cfitab {
	uint64_t base;		/* module virtual address of row address 0 */
	uint16_t machine;	/* EM_X86_64 or EM_AARCH64 */
	uint8_t sp_reg, fp_reg, ra_reg;	/* DWARF numbers of the tracked registers */
	struct cfirow *rows;	/* sorted by addr; the last one is always CFA_NONE */
	size_t nrows;
	uint8_t *pool;		/* expressions: u16 length, then the bytes */
	size_t npool;
	const char *source;	/* ".eh_frame", ".debug_frame", "debug file", "none" */
	struct cfilazy *lazy;	/* a lazy table's FDEs, each interpreted on first use (cfi.c) */
};

/* Builds the table of an opened ELF file from .eh_frame (its section, or through
 * PT_GNU_EH_FRAME when there are no section headers), else .debug_frame.  Returns NULL only
 * when out of memory; a module without unwind information gets a table without rows.
 * The table is lazy: it lists the FDEs' ranges (a copy of the section kept) and interprets
 * an FDE the first time an address in it is looked up, so a big library costs only the
 * functions a recording's stacks pass through (cfitab_lookup). */
struct cfitab *cfitab_build(Elf *elf);
/* The same, every FDE interpreted at once into one table of rows (tests compare the two). */
struct cfitab *cfitab_build_full(Elf *elf);
/* 1 when the table has unwind information (rows, or FDEs still to interpret). */
int cfitab_has_rows(const struct cfitab *);
/* The rows a table holds so far (a lazy one: those of the FDEs interpreted). */
size_t cfitab_rows(const struct cfitab *);
/* The row covering vaddr, from a full or a lazy table; *owner is the table whose pool
 * (cfitab_expr) and registers the row refers to.  NULL when no FDE covers vaddr (or out of
 * memory interpreting one). */
const struct cfirow *cfitab_lookup(const struct cfitab *, uint64_t vaddr,
				   const struct cfitab **owner);
/* The same for one raw section (tests): data holds .eh_frame (eh != 0) or .debug_frame
 * loaded at module address addr; every FDE interpreted at once, or lazily. */
struct cfitab *cfitab_from_section(uint16_t machine, const uint8_t *data, size_t len,
				   uint64_t addr, int eh);
struct cfitab *cfitab_lazy_from_section(uint16_t machine, const uint8_t *data, size_t len,
					uint64_t addr, int eh);
/* The row covering module virtual address vaddr, or NULL when no FDE covers it (a full
 * table; cfitab_lookup takes both kinds). */
const struct cfirow *cfitab_find(const struct cfitab *, uint64_t vaddr);
/* An expression of the pool: its bytes and length; NULL when off is out of range. */
const uint8_t *cfitab_expr(const struct cfitab *, int32_t off, size_t *len);
/* Resident bytes of the table. */
size_t cfitab_bytes(const struct cfitab *);
void cfitab_free(struct cfitab *);	/* accepts NULL */

/* One table per module, built on first use and kept by module (the symbolizer keeps one
 * module per build id, or per path without one) until cfi_cache_free. */
struct cfi_cache;
struct symmod;

/* dirs (copied) are the symbol directories searched for debug files, as the symbolizer's.
 * NULL when out of memory. */
struct cfi_cache *cfi_cache_new(const char *const *dirs, size_t ndirs);
/* The module's table; NULL when out of memory.  A module without unwind information has a
 * table without rows. */
const struct cfitab *cfi_cache_get(struct cfi_cache *, struct symmod *);
/* Tables built, their rows and resident bytes, for diagnostics and benchmarks. */
void cfi_cache_stats(const struct cfi_cache *, size_t *tables, size_t *rows, size_t *bytes);
void cfi_cache_free(struct cfi_cache *);	/* accepts NULL */

#endif
