/* symelf: what the symbolizer reads from ELF itself (libelf only, no DWARF):
 * the GNU build id, PT_LOAD segments, .gnu_debuglink, and function symbols from .symtab and
 * .dynsym.  Every reader checks section sizes and indexes, so a truncated or corrupt file
 * yields "nothing found", never a crash.
 */
#ifndef RP_SYMELF_H
#define RP_SYMELF_H

#include <stddef.h>
#include <stdint.h>

#include <libelf.h>

#include "symstr.h"

#define SYM_BUILD_ID_MAX 64	/* SHA-1 ids are 20 bytes; leave room for longer hashes */

struct symseg {
	uint64_t offset, vaddr, size;	/* file offset, address, bytes of file backing */
};

struct symfunc {
	uint64_t lo, hi;		/* [lo, hi) */
	const char *sys;		/* raw (mangled) name, in the index's strs */
	const char *name;		/* demangled, filled on first lookup; NULL until then */
};

struct symtab_index {
	struct symfunc *v;
	size_t n;
	char **strs;			/* copies of the string tables the names point into */
	size_t nstrs;
	uint32_t str0_scn;		/* strs[0]'s section, and its size */
	size_t str0_size;
};

/* Copies the NT_GNU_BUILD_ID note into out; returns its length, 0 when absent. */
size_t symelf_build_id(Elf *, uint8_t out[SYM_BUILD_ID_MAX]);
/* Fills a malloc'ed array of PT_LOAD segments; returns the count, -1 on a bad ELF. */
int symelf_segments(Elf *, struct symseg **out);
/* .gnu_debuglink: returns the file name (owned by the Elf) and sets *crc, or NULL. */
const char *symelf_debuglink(Elf *, uint32_t *crc);
/* Does the ELF carry a section of this name with file contents (not SHT_NOBITS)? */
int symelf_has_section(Elf *, const char *name);
/* Adds STT_FUNC/STT_GNU_IFUNC symbols of .symtab and .dynsym to idx (sorted, one per
 * address; a size-0 symbol extends to the next symbol).  Returns 0, or -1 when out of
 * memory. */
int symtab_index_build(struct symtab_index *idx, Elf *);
struct dbgix_func;
/* The same from the functions an earlier build found (dbgindex.h: sorted by lo, once each),
 * their names offsets in string table section strndx of strsize bytes.  0, or -1 (idx
 * empty) when out of memory or that section is not such a table. */
int symtab_index_from(struct symtab_index *idx, Elf *, const struct dbgix_func *f, size_t n,
		      uint32_t strndx, uint64_t strsize);
/* The symbol containing addr, or NULL. */
struct symfunc *symtab_index_find(const struct symtab_index *, uint64_t addr);
void symtab_index_free(struct symtab_index *);

#endif
