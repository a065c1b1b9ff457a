#include "heapsym.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <gelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "procfs.h"

static const char *const names[HF_MAX] = {
	[HF_MALLOC] = "malloc", [HF_CALLOC] = "calloc", [HF_REALLOC] = "realloc",
	[HF_FREE] = "free", [HF_ALIGNED_ALLOC] = "aligned_alloc",
	[HF_POSIX_MEMALIGN] = "posix_memalign", [HF_RUST_ALLOC] = "__rust_alloc",
	[HF_RUST_ALLOC_ZEROED] = "__rust_alloc_zeroed", [HF_RUST_REALLOC] = "__rust_realloc",
	[HF_RUST_DEALLOC] = "__rust_dealloc",
};

const char *
heapsym_name(enum heap_fn f)
{
	return names[f];
}

/* The file offset of a defined function symbol: its address within its section. */
static uint64_t
file_offset(Elf *e, const GElf_Sym *s)
{
	GElf_Shdr sh;
	Elf_Scn *scn = elf_getscn(e, s->st_shndx);
	if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
	    s->st_value < sh.sh_addr || s->st_value - sh.sh_addr >= sh.sh_size)
		return 0;
	return s->st_value - sh.sh_addr + sh.sh_offset;
}

/* Fills off[] (roles first..last) from the defined functions of one symbol table. */
static void
scan_table(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, int first, int last, uint64_t *off)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;
	for (size_t i = 0; d && i < n; i++) {
		GElf_Sym s;
		if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF ||
		    s.st_shndx >= SHN_LORESERVE || s.st_value == 0)
			continue;
		int type = GELF_ST_TYPE(s.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC)
			continue;
		const char *nm = elf_strptr(e, sh->sh_link, s.st_name);
		for (int f = first; nm && f <= last; f++)
			if (!off[f] && strcmp(nm, names[f]) == 0)
				off[f] = file_offset(e, &s);
	}
}

/* The roles first..last defined in the ELF file at path: their offsets in off[]. */
static int
scan_file(const char *path, int first, int last, uint64_t *off)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	Elf_Scn *scn = NULL;
	while (e && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM))
			scan_table(e, scn, &sh, first, last, off);
	}
	elf_end(e);
	close(fd);
	return 0;
}

/* The mapped files of the target, the executable first, each once, with the range of its
 * first executable mapping (0, 0 for a library not mapped yet). */
struct modlist {
	char paths[64][PATH_MAX];
	uint64_t start[64], end[64];
	int n;
};

static int
add_module(const struct procmap *m, void *arg)
{
	struct modlist *l = arg;
	if (m->path[0] != '/' || !(m->prot & 4 /* PROT_EXEC */) || l->n == 64)
		return 0;
	for (int i = 0; i < l->n; i++)
		if (strcmp(l->paths[i], m->path) == 0)
			return 0;
	l->start[l->n] = m->start;
	l->end[l->n] = m->end;
	snprintf(l->paths[l->n++], PATH_MAX, "%s", m->path);
	return 0;
}

static int
is_libc(const char *path)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	return fnmatch("libc.so.6", b, 0) == 0 || fnmatch("libc-2.*.so", b, 0) == 0 ||
	       fnmatch("ld-musl-*.so.1", b, 0) == 0 || fnmatch("libc.musl-*.so.1", b, 0) == 0;
}

/* A launched command stopped before its loader ran: the libc its DT_NEEDED names, in the
 * library directories of its root. */
static int
needed_libc(pid_t pid, const char *exe, struct modlist *l)
{
	static const char *const dirs[] = { "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
		"/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64",
		"/lib", "/usr/lib" };
	char path[PATH_MAX + 32];
	snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pid, exe);
	int fd = open(path, O_RDONLY | O_CLOEXEC), found = 0;
	if (fd < 0)
		return 0;
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	Elf_Scn *scn = NULL;
	while (e && !found && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		GElf_Dyn dyn;
		for (int i = 0; !found && gelf_getdyn(d, i, &dyn); i++) {
			const char *nm = dyn.d_tag == DT_NEEDED ?
				elf_strptr(e, sh.sh_link, dyn.d_un.d_val) : NULL;
			for (size_t k = 0; nm && is_libc(nm) && !found && k < 8 && l->n < 64; k++) {
				snprintf(path, sizeof(path), "/proc/%d/root%s/%s", (int)pid, dirs[k], nm);
				if (access(path, R_OK) == 0) {
					snprintf(l->paths[l->n++], PATH_MAX, "%s/%s", dirs[k], nm);
					found = 1;
				}
			}
		}
	}
	elf_end(e);
	close(fd);
	return found;
}

/* Looks for roles first..last (required up to last_required) in module i of l. */
static int
try_module(pid_t pid, const struct modlist *l, int i, int first, int last_required, int last,
	   struct heap_probe *p)
{
	uint64_t off[HF_MAX] = { 0 };
	char path[PATH_MAX + 32];
	snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pid, l->paths[i]);
	if (scan_file(path, first, last, off) < 0)
		return 0;
	int have = 0;
	for (int f = first; f <= last_required; f++)
		have += off[f] != 0;
	if (have == 0)
		return 0;
	snprintf(p->module, sizeof(p->module), "%s", l->paths[i]);
	/* The probes go on the file the mapping holds: /proc/PID/map_files names it, where the
	 * path through the target's root may name another inode.  A container's root is an
	 * overlay: its files are mapped from the layer below, and a uprobe on the overlay's
	 * inode of the same path never fires.  A library not mapped yet (a launched command
	 * before its loader ran) has only its path. */
	if (l->end[i])
		snprintf(p->open_path, sizeof(p->open_path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
			 (int)pid, l->start[i], l->end[i]);
	else
		snprintf(p->open_path, sizeof(p->open_path), "%s", path);
	memcpy(p->offset, off, sizeof(off));
	p->complete = have == last_required - first + 1;
	return p->complete ? 1 : -1;
}

/* The first module of l (in order; libc_only: the libc modules and the executable) with
 * the complete family: 1; -1 when one had only part of it (p->module names it); 0: none. */
static int
find_family(pid_t pid, const struct modlist *l, int rust, struct heap_probe *p)
{
	int partial = 0;
	for (int i = 0; i < l->n; i++) {
		if (!rust && i > 0 && !is_libc(l->paths[i]))
			continue;
		int rc = rust ? try_module(pid, l, i, HF_RUST_ALLOC, HF_RUST_DEALLOC, HF_RUST_DEALLOC, p)
			      : try_module(pid, l, i, HF_MALLOC, HF_FREE, HF_POSIX_MEMALIGN, p);
		if (rc > 0)
			return 1;
		partial |= rc < 0;
	}
	return partial ? -1 : 0;
}

static int
family(pid_t pid, const struct modlist *l, int rust, struct heap_probe *p)
{
	int rc = find_family(pid, l, rust, p);
	if (rc > 0) {
		p->detected = rust ? "rust" : "system";
		return 0;
	}
	if (rc < 0)
		snprintf(p->reason, sizeof(p->reason), "%.300s defines only part of the %s family",
			 p->module, rust ? "rust" : "system");
	else if (rust)
		snprintf(p->reason, sizeof(p->reason), "no mapped module defines the rust family "
			 "(__rust_alloc, __rust_alloc_zeroed, __rust_realloc, __rust_dealloc)");
	else
		snprintf(p->reason, sizeof(p->reason), "neither the executable nor a mapped glibc "
			 "or musl defines the system family (malloc, calloc, realloc, free)");
	p->module[0] = p->open_path[0] = 0;
	memset(p->offset, 0, sizeof(p->offset));
	return -1;
}

int
heapsym_detect(pid_t pid, const char *requested, struct heap_probe *p)
{
	static struct modlist l;
	char exe[PATH_MAX];
	memset(p, 0, sizeof(*p));
	snprintf(p->requested, sizeof(p->requested), "%s", requested);
	l.n = 0;
	if (procfs_exe(pid, exe, sizeof(exe)) == 0)
		snprintf(l.paths[l.n++], PATH_MAX, "%s", exe);
	if (procfs_maps(pid, add_module, &l) < 0) {
		snprintf(p->reason, sizeof(p->reason), "cannot read the mappings of pid %d", (int)pid);
		return -1;
	}
	int has_libc = 0;
	for (int i = 0; i < l.n; i++)
		has_libc |= is_libc(l.paths[i]);
	if (!has_libc && l.n > 0)
		needed_libc(pid, l.paths[0], &l);
	if (strcmp(requested, "system") != 0 && family(pid, &l, 1, p) == 0)
		return 0;
	if (strcmp(requested, "rust") == 0)
		return -1;
	char rust_why[400];
	snprintf(rust_why, sizeof(rust_why), "%s", p->reason);
	if (family(pid, &l, 0, p) == 0) {
		p->reason[0] = 0;
		return 0;
	}
	if (strcmp(requested, "auto") == 0) {
		char sys_why[400];
		snprintf(sys_why, sizeof(sys_why), "%s", p->reason);
		snprintf(p->reason, sizeof(p->reason), "no supported allocator: %.180s; %.180s",
			 rust_why, sys_why);
	}
	return -1;
}
