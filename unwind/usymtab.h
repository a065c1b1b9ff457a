/*
 * Symbols a capture carried for user modules (FR_USYM, written by import from simpleperf's
 * FILE section), used where unwind finds no ELF file or no symbol for a mapping.
 *
 * Without the ELF file there are no program headers to turn a file offset into the virtual
 * address the symbols use, so the conversion is simpleperf's, from two numbers import
 * appends to each frame: vaddr = file_offset - fo_min_vaddr + min_vaddr, or, for captures
 * of older simpleperf versions without fo_min_vaddr, vaddr = addr - map_start + min_vaddr
 * (the mapping is assumed to start at the lowest executable address).
 */
#ifndef RP_USYMTAB_H
#define RP_USYMTAB_H

#include <stddef.h>
#include <stdint.h>

#include "stream.h"

#define USYM_UNKNOWN UINT64_MAX

struct usym {
	uint64_t start, end;
	char *name;              /* as linked */
	char *demangled;         /* readable, or NULL when name is not mangled */
};

struct usymmod {
	uint8_t build_id_len;
	uint8_t build_id[STREAM_BUILD_ID_MAX];
	char *path;
	uint64_t min_vaddr, fo_min_vaddr; /* fo_min_vaddr USYM_UNKNOWN: older capture */
	struct usym *syms;
	size_t n, cap;
	int sorted;
};

struct usymtab {
	struct usymmod *mods;
	size_t n, cap;
};

/* Adds the symbol of one FR_USYM frame.  0, or -1 with a reason in err. */
int usymtab_add(struct usymtab *t, const struct frame *f, char *err, size_t errlen);
/* The module with this build id, else (when neither side has a build id to compare) this
 * path; NULL when the capture carried no symbols for it. */
struct usymmod *usymtab_module(struct usymtab *t, const uint8_t *build_id, size_t build_id_len,
			       const char *path);
/* The ELF virtual address of addr inside the mapping [map_start, ...) at file offset pgoff. */
uint64_t usymmod_vaddr(const struct usymmod *m, uint64_t addr, uint64_t map_start,
		       uint64_t pgoff);
/* The symbol holding vaddr, or NULL. */
const struct usym *usymmod_find(struct usymmod *m, uint64_t vaddr);
void usymtab_release(struct usymtab *t);

#endif
