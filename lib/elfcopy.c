/* elfcopy: the header and program headers of an ELF copy, and its end (see elfcopy.h). */
#include "elfcopy.h"

#include <stddef.h>

uint64_t elfcopy_align(uint64_t v, uint64_t a)
{
	return a > 1 ? (v + a - 1) / a * a : v;
}

int elfcopy_start(Elf *in, int fd, Elf **out, GElf_Ehdr *eh, uint64_t *off)
{
	size_t nph = 0;
	Elf *o;

	*out = NULL;
	if (!gelf_getehdr(in, eh) || !(o = *out = elf_begin(fd, ELF_C_WRITE, NULL)))
		return -1;
	if (elf_getphdrnum(in, &nph) != 0)
		nph = 0;
	if (!gelf_newehdr(o, gelf_getclass(in)) || (nph && !gelf_newphdr(o, nph)))
		return -1;
	*off = gelf_fsize(o, ELF_T_EHDR, 1, EV_CURRENT);
	eh->e_phoff = nph ? *off : 0;
	*off += nph * gelf_fsize(o, ELF_T_PHDR, 1, EV_CURRENT);
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(in, (int)i, &ph) || !gelf_update_phdr(o, (int)i, &ph))
			return -1;
	}
	return 0;
}

int elfcopy_finish(Elf *o, GElf_Ehdr *eh, uint64_t off, size_t nscn)
{
	eh->e_shoff = elfcopy_align(off, 8);
	eh->e_shnum = nscn < SHN_LORESERVE ? (uint16_t)nscn : 0;
	if (!gelf_update_ehdr(o, eh))
		return -1;
	elf_flagelf(o, ELF_C_SET, ELF_F_LAYOUT);
	return elf_update(o, ELF_C_WRITE) < 0 ? -1 : 0;
}
