/* Compressed sections inflated with libdeflate (secinflate.h). */
#include "secinflate.h"

#include <stdint.h>
#include <stdlib.h>

#ifdef RP_HAVE_LIBDEFLATE
#include <libdeflate.h>

/* One decompressor for the process: it is a table of a few KiB, set up once. */
static struct libdeflate_decompressor *dc;

void *secinflate(Elf *elf, Elf_Scn *scn, size_t *len, size_t *align)
{
	size_t chdr = gelf_getclass(elf) == ELFCLASS32 ? sizeof(Elf32_Chdr) : sizeof(Elf64_Chdr);
	GElf_Shdr sh;
	GElf_Chdr ch;
	Elf_Data *d;
	void *out;

	if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_COMPRESSED) || sh.sh_type == SHT_NOBITS ||
	    !gelf_getchdr(scn, &ch) || ch.ch_type != ELFCOMPRESS_ZLIB || ch.ch_size == 0 ||
	    ch.ch_size > SIZE_MAX || !(d = elf_getdata(scn, NULL)) || !d->d_buf ||
	    d->d_size < chdr)
		return NULL;
	/* Deflate expands at most 1032 times: a larger claimed size is corrupt. */
	if (ch.ch_size / 1032 > d->d_size - chdr)
		return NULL;
	if ((!dc && !(dc = libdeflate_alloc_decompressor())) || !(out = malloc((size_t)ch.ch_size)))
		return NULL;
	if (libdeflate_zlib_decompress(dc, (const char *)d->d_buf + chdr, d->d_size - chdr, out,
				       (size_t)ch.ch_size, NULL) != LIBDEFLATE_SUCCESS) {
		free(out);
		return NULL;
	}
	*len = (size_t)ch.ch_size;
	*align = (size_t)ch.ch_addralign;
	return out;
}
#else
void *secinflate(Elf *elf, Elf_Scn *scn, size_t *len, size_t *align)
{
	(void)elf;
	(void)scn;
	(void)len;
	(void)align;
	return NULL;
}
#endif
