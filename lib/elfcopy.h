/*
 * elfcopy: the frame of an ELF file written section by section with a layout of one's own
 * (ELF_F_LAYOUT): the header of the input's class, its program headers copied as they are
 * (they describe the original file, which the mappings name), then the sections the caller
 * places, then the section headers.  collect's reduced module copies and unwind's debug
 * cache write their copies through it.
 */
#ifndef RP_ELFCOPY_H
#define RP_ELFCOPY_H

#include <gelf.h>
#include <stdint.h>

/* Starts the copy of in on fd: *out gets the new ELF (to elf_end, even after a failure),
 * *eh in's header and *off the first byte after the headers, where sections may go.
 * 0, or -1 (libelf's elf_errmsg(-1) says why). */
int elfcopy_start(Elf *in, int fd, Elf **out, GElf_Ehdr *eh, uint64_t *off);
/* Writes the file: the section headers after off, aligned, nscn of them.  0 or -1. */
int elfcopy_finish(Elf *out, GElf_Ehdr *eh, uint64_t off, size_t nscn);
/* v rounded up to a multiple of a (0 and 1: v). */
uint64_t elfcopy_align(uint64_t v, uint64_t a);

#endif
