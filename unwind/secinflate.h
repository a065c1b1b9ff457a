/*
 * Compressed sections (SHF_COMPRESSED, ELFCOMPRESS_ZLIB) inflated with libdeflate, about
 * twice as fast as libelf's zlib: the debug sections of distributions' debug files, and
 * the .eh_frame, symbols and names the module cache stores compressed (collect/elfslim.h).
 */
#ifndef UNWIND_SECINFLATE_H
#define UNWIND_SECINFLATE_H

#include <gelf.h>
#include <stddef.h>

/* The contents of section scn inflated into a buffer of the caller's (free it), *len its
 * size and *align the section's alignment before compression; NULL when the section is not
 * zlib-compressed, is damaged, or this build has no libdeflate (the caller then leaves it
 * to libelf's elf_compress). */
void *secinflate(Elf *elf, Elf_Scn *scn, size_t *len, size_t *align);

#endif
