/*
 * The part of an ELF file the later stages read (docs/module-cache.md): every section
 * header, in its place, so symbol section indexes and addresses still hold; the program
 * headers as they were, which turn a mapping's file offsets into virtual addresses; and
 * the contents of the symbol tables and their strings (.symtab, .strtab, .dynsym,
 * .dynstr), the unwind tables (.eh_frame, .debug_frame), the DWARF (.debug_*, .zdebug_*),
 * the notes (the build id), .gnu_debuglink, .gnu_debugaltlink, .gnu_debugdata and the
 * section names.  Every other section keeps its header as SHT_NOBITS, without contents,
 * as in a separate debug file (objcopy --only-keep-debug).  Contents of 64 bytes and more
 * that are not compressed already are compressed (SHF_COMPRESSED, zlib); unwind inflates
 * them as it reads them.  The file is no longer loadable: it only describes the original.
 */
#ifndef COLLECT_ELFSLIM_H
#define COLLECT_ELFSLIM_H

#include <stddef.h>
#include <stdint.h>

/* Bytes the kept contents take in the ELF file open at fd, before compression, and the
 * file's size; 0, or -1 when it is not an ELF file that can be reduced (no section headers,
 * extended section numbering). */
int elfslim_measure(int fd, uint64_t *kept, uint64_t *size);
/* Writes the reduced copy of the ELF file at in to the empty file out.  0, or -1 with a
 * reason in err. */
int elfslim_write(int in, int out, char *err, size_t errlen);

#endif
