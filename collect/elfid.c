/* Build ids and machine types through libelf, from the loaded notes (PT_NOTE). */
#include <gelf.h>
#include <libelf.h>
#include <string.h>

#include "elfid.h"

static Elf *
elfid_begin(int fd)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e && elf_kind(e) != ELF_K_ELF) {
		elf_end(e);
		return NULL;
	}
	return e;
}

/* Scans one note blob for NT_GNU_BUILD_ID. */
static int
note_build_id(Elf_Data *d, uint8_t *out, size_t cap)
{
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;
	while (d && off < d->d_size && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off))) {
		if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
		    memcmp((char *)d->d_buf + name_off, "GNU", 4) != 0)
			continue;
		size_t n = nh.n_descsz < cap ? nh.n_descsz : cap;
		memcpy(out, (char *)d->d_buf + desc_off, n);
		return (int)n;
	}
	return 0;
}

int
elfid_build_id(int fd, uint8_t *out, size_t cap)
{
	Elf *e = elfid_begin(fd);
	if (!e)
		return 0;
	size_t nph = 0;
	int n = 0;
	if (elf_getphdrnum(e, &nph) != 0)
		nph = 0;
	for (size_t i = 0; i < nph && n == 0; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		Elf_Data *d = elf_getdata_rawchunk(e, (int64_t)ph.p_offset, ph.p_filesz,
						   ELF_T_NHDR);
		n = note_build_id(d, out, cap);
	}
	/* Files without program headers (rare: relocatables) keep the note in a section. */
	for (Elf_Scn *s = NULL; n == 0 && (s = elf_nextscn(e, s));) {
		GElf_Shdr sh;
		if (gelf_getshdr(s, &sh) && sh.sh_type == SHT_NOTE)
			n = note_build_id(elf_getdata(s, NULL), out, cap);
	}
	elf_end(e);
	return n;
}

int
elfid_machine(int fd)
{
	Elf *e = elfid_begin(fd);
	if (!e)
		return -1;
	GElf_Ehdr eh;
	int m = gelf_getehdr(e, &eh) ? eh.e_machine : -1;
	elf_end(e);
	return m;
}
