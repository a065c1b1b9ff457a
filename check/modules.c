/*
 * Every mapped ELF module of the target, as the unwinder will meet it: its build id, the
 * sections unwinding can use (.eh_frame_hdr/.eh_frame for DWARF unwinding, .debug_frame),
 * its symbol tables, and the separate debug file unwind would find (the same search:
 * unwind/debugfile.c, with the --symbol-dir directories).
 */
#include <elf.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "debugfile.h"
#include "elfid.h"
#include "procfs.h"
#include "report.h"
#include "symelf.h"

/* Counts of the symbol table of type type (SHT_SYMTAB, SHT_DYNSYM), and the unwinding
 * sections present. */
static void
sections(Elf *e, struct module_info *mi)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		return;
	for (Elf_Scn *s = NULL; (s = elf_nextscn(e, s));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(s, &sh))
			continue;
		const char *name = elf_strptr(e, shstrndx, sh.sh_name);
		long n = sh.sh_entsize ? (long)(sh.sh_size / sh.sh_entsize) : 0;
		if (sh.sh_type == SHT_SYMTAB)
			mi->symtab = n > 0 ? n - 1 : 0; /* entry 0 is the null symbol */
		else if (sh.sh_type == SHT_DYNSYM)
			mi->dynsym = n > 0 ? n - 1 : 0;
		if (!name || sh.sh_type == SHT_NOBITS)
			continue;
		mi->eh_frame |= !strcmp(name, ".eh_frame");
		mi->eh_frame_hdr |= !strcmp(name, ".eh_frame_hdr");
		mi->debug_frame |= !strcmp(name, ".debug_frame");
		mi->debug_info |= !strcmp(name, ".debug_info");
	}
}

static void
debug_file(struct report *r, Elf *e, struct module_info *mi, const uint8_t *id, size_t idlen)
{
	if (mi->debug_info && mi->symtab)
		return; /* the module carries its own */
	uint32_t crc = 0;
	const char *link = symelf_debuglink(e, &crc);
	struct debugfile_query q = { .path = mi->path, .debuglink = link, .crc = crc,
				     .build_id = idlen ? id : NULL, .build_id_len = idlen,
				     .dirs = r->symbol_dirs, .ndirs = r->nsymbol_dirs };
	struct elffile df = { .fd = -1 };
	if (debugfile_find(&q, &df) == 0) {
		snprintf(mi->debug_file, sizeof(mi->debug_file), "%s", df.path);
		elffile_close(&df);
	}
}

static void
describe(struct report *r, const struct procmap *m, struct module_info *mi)
{
	memset(mi, 0, sizeof(*mi));
	snprintf(mi->path, sizeof(mi->path), "%s", m->path);
	int fd = procfs_open_mapping(r->pid, m->start, m->end, m->path);
	if (fd < 0)
		return;
	uint8_t id[20];
	int idlen = elfid_build_id(fd, id, sizeof(id));
	if (idlen > 0)
		build_id_hex(id, (size_t)idlen, mi->build_id);
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e && elf_kind(e) == ELF_K_ELF) {
		mi->elf = 1;
		sections(e, mi);
		debug_file(r, e, mi, id, idlen > 0 ? (size_t)idlen : 0);
	}
	if (e)
		elf_end(e);
	close(fd);
}

static int
one_map(const struct procmap *m, void *arg)
{
	struct report *r = arg;
	if (!(m->prot & PROT_EXEC) || m->path[0] != '/')
		return 0; /* [vdso], anonymous JIT code: not files */
	for (size_t i = 0; i < r->nmods; i++)
		if (!strcmp(r->mods[i].path, m->path))
			return 0;
	if (r->nmods == CHECK_MAX_MODULES) {
		r->mods_omitted++;
		return 0;
	}
	if (r->nmods == r->capmods) {
		size_t cap = r->capmods ? 2 * r->capmods : 32;
		struct module_info *v = realloc(r->mods, cap * sizeof(*v));
		if (!v) {
			report_msg(&r->errors, "modules: out of memory");
			return 1;
		}
		r->mods = v;
		r->capmods = cap;
	}
	describe(r, m, &r->mods[r->nmods++]);
	return 0;
}

void
report_modules(struct report *r)
{
	if (r->executable[0] == 0)
		return;
	elf_version(EV_CURRENT);
	if (procfs_maps(r->pid, one_map, r) < 0)
		report_msg(&r->errors, "modules: cannot read /proc/%d/maps", (int)r->pid);
	if (r->mods_omitted)
		report_msg(&r->warnings, "modules: %zu more modules than the %d listed",
			   r->mods_omitted, CHECK_MAX_MODULES);
	for (size_t i = 0; i < r->nmods; i++) {
		const struct module_info *mi = &r->mods[i];
		if (!mi->elf)
			report_msg(&r->warnings, "module %s: cannot be read as ELF", mi->path);
		else if (!mi->eh_frame && !mi->debug_frame && !mi->debug_file[0])
			report_msg(&r->warnings, "module %s: no unwind tables (.eh_frame, "
				   ".debug_frame): DWARF unwinding stops in it", mi->path);
	}
}
