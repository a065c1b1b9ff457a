/* libFuzzer target: unwind's CFI reader (cfiparse.c: CIEs, FDEs, pointer encodings and the
 * call frame instructions, interpreted into rows; cfi.c: sorting, merging, the expression
 * pool and the ELF lookup of .eh_frame, .eh_frame_hdr and .debug_frame).
 *
 * Input: one mode byte, then
 *   mode & 4 == 0: u64 load address (little-endian) and the raw bytes of one section,
 *                  .eh_frame (mode & 1) or .debug_frame, for x86_64 or aarch64 (mode & 2);
 *   mode & 4:      a whole ELF file, tables built as for a module.
 * The table is then searched at every row, between rows and past both ends, and every
 * expression a row names is fetched: whatever was built must be consistent.  The lazy table
 * of the same bytes (cfitab_build, cfitab_lazy_from_section) is looked up at the same
 * addresses, interpreting the FDEs they fall in. */
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../unwind/cfi.h"

static volatile size_t sink;

static void
probe(const struct cfitab *t)
{
	sink += cfitab_bytes(t);
	(void)cfitab_find(t, 0);
	(void)cfitab_find(t, UINT64_MAX);
	(void)cfitab_find(t, t->base - 1);
	for (size_t i = 0; i < t->nrows; i++) {
		const struct cfirow *r = &t->rows[i];
		if (i && r->addr < t->rows[i - 1].addr)
			abort(); /* rows must be sorted */
		const struct cfirow *f = cfitab_find(t, t->base + r->addr);
		if (f && f->addr > r->addr)
			abort();
		(void)cfitab_find(t, t->base + r->addr + 1);
		size_t len;
		if (r->cfa == CFA_EXPR)
			sink += cfitab_expr(t, r->cfa_off, &len) ? len : 0;
		if (r->ra == REG_AT_EXPR || r->ra == REG_VAL_EXPR)
			sink += cfitab_expr(t, r->ra_off, &len) ? len : 0;
		if (r->fp == REG_AT_EXPR || r->fp == REG_VAL_EXPR)
			sink += cfitab_expr(t, r->fp_off, &len) ? len : 0;
	}
	if (t->nrows && t->rows[t->nrows - 1].cfa != CFA_NONE)
		abort(); /* the last row always ends the table */
}

/* A lazy table looked up where the full one has rows, and around them: every FDE a lookup
 * reaches is interpreted then, and its rows must hold together as a full table's. */
static void
probe_lazy(const struct cfitab *lazy, const struct cfitab *full)
{
	const struct cfitab *owner;

	(void)cfitab_lookup(lazy, 0, &owner);
	(void)cfitab_lookup(lazy, UINT64_MAX, &owner);
	for (size_t i = 0; full && i < full->nrows; i++) {
		uint64_t a = full->base + full->rows[i].addr;
		for (uint64_t d = 0; d < 2; d++) {
			const struct cfirow *r = cfitab_lookup(lazy, a + d, &owner);
			size_t len;
			if (r && (r < owner->rows || r >= owner->rows + owner->nrows))
				abort(); /* a row of the table it says it is from */
			if (r && r->cfa == CFA_EXPR)
				sink += cfitab_expr(owner, r->cfa_off, &len) ? len : 0;
		}
	}
	sink += cfitab_bytes(lazy) + cfitab_rows(lazy) + (size_t)cfitab_has_rows(lazy);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cfitab *t = NULL;

	if (size < 1 || size > 1 << 20)
		return 0;
	uint8_t mode = data[0];
	data++, size--;
	if (mode & 4) {
		elf_version(EV_CURRENT);
		/* libelf may write to the image it reads: give it a copy. */
		char *copy = malloc(size ? size : 1);
		if (!copy)
			return 0;
		memcpy(copy, data, size);
		Elf *e = elf_memory(copy, size);
		struct cfitab *lazy = NULL;
		if (e && elf_kind(e) == ELF_K_ELF) {
			t = cfitab_build_full(e);
			lazy = cfitab_build(e);
		}
		if (e)
			elf_end(e);
		if (t)
			probe(t);
		if (lazy)
			probe_lazy(lazy, t);
		cfitab_free(t);
		cfitab_free(lazy);
		free(copy);
		return 0;
	}
	if (size < 8)
		return 0;
	uint64_t addr;
	memcpy(&addr, data, 8);
	uint16_t mach = mode & 2 ? EM_AARCH64 : EM_X86_64;
	t = cfitab_from_section(mach, data + 8, size - 8, addr, mode & 1);
	struct cfitab *lazy = cfitab_lazy_from_section(mach, data + 8, size - 8, addr, mode & 1);
	if (t)
		probe(t);
	if (lazy)
		probe_lazy(lazy, t);
	cfitab_free(t);
	cfitab_free(lazy);
	return 0;
}
