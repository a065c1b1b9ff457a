/* cfibuild: rows as the CFI interpreter produces them, before sorting (private to cfi.c and
 * cfiparse.c). */
#ifndef RP_CFIBUILD_H
#define RP_CFIBUILD_H

#include <stddef.h>
#include <stdint.h>

struct rawrow {
	uint64_t addr;		/* module virtual address */
	uint32_t seq;		/* emission order: a later row at the same address wins */
	uint8_t cfa, ra, fp;	/* CFA_*, REG_* as in cfi.h */
	int32_t cfa_off, ra_off, fp_off;
};

struct cfifde {
	uint64_t lo, hi;	/* module addresses it covers */
	size_t off;		/* its entry's offset in the section */
	uint32_t seq;		/* its place in the section: a later one wins a tie */
};

struct cfibuild {
	uint16_t machine;
	uint8_t sp_reg, fp_reg, ra_reg;
	struct rawrow *rows;
	size_t n, cap;
	uint8_t *pool;		/* expressions: u16 length, then the bytes */
	size_t npool, pool_cap;
	size_t last_expr;	/* offset of the last pooled expression, for reuse */
	int oom;		/* an allocation failed: the result is incomplete */
	int indexing;		/* list the FDEs in fdes instead of interpreting them */
	struct cfifde *fdes;
	size_t nfde, fde_cap;
	size_t entry_off;	/* the entry being parsed */
};

/* Interprets every FDE of one section (eh: .eh_frame layout, else .debug_frame) loaded at
 * module address addr, appending rows to b.  Corrupt entries are skipped. */
void cfi_parse_section(struct cfibuild *b, const uint8_t *data, size_t len, uint64_t addr,
		       int eh);

/* Interprets the one FDE whose entry starts at offset off of the section. */
void cfi_parse_entry(struct cfibuild *b, const uint8_t *data, size_t len, uint64_t addr, int eh,
		     size_t off);

/* Sorts rows by address, then emission order (the order qsort with that key gives). */
void cfi_sort_rows(struct rawrow *rows, size_t n);

#endif
