/* unwind/dwunits: the units, their .debug_aranges ranges and whether each says where its
 * code is, read from the sections' bytes, against what libdw says of the same file:
 * programs compiled here as DWARF 2, 4 and 5, by gcc and clang (which writes no
 * .debug_aranges), with split DWARF (skeleton units, left out), and libc's debug file where
 * libc6-dbg is installed (inflated by objcopy first: dwunits reads uncompressed sections);
 * and damaged sections, which make the reader decline rather than answer wrong. */
#include "../../unwind/dwunits.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "run.h"

static char dir[] = "/tmp/dwunits_test.XXXXXX";

struct rng {
	uint64_t lo, hi, die;
};

static int rng_cmp(const void *a, const void *b)
{
	const struct rng *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	return x->die < y->die ? -1 : x->die > y->die;
}

struct got {
	struct rng v[65536];
	size_t n;
	const struct dwunits *u;
};

static int add(void *arg, uint64_t lo, uint64_t hi, uint32_t unit)
{
	struct got *g = arg;

	if (g->n < sizeof(g->v) / sizeof(g->v[0]))
		g->v[g->n++] = (struct rng){ lo, hi, g->u->v[unit].die };
	return 0;
}

/* One file: dwunits agrees with libdw on it; returns the units compared. */
static size_t compare(const char *path)
{
	static struct got mine, theirs;
	struct dwunits u;
	int fd = open(path, O_RDONLY);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	Dwarf *dw = elf ? dwarf_begin_elf(elf, DWARF_C_READ, NULL) : NULL;
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie, subdie;
	Dwarf_Half version;
	uint8_t type;
	size_t n = 0;

	CHECK(dw != NULL);
	if (!dw)
		return 0;
	CHECK(dwunits_list(elf, &u) == 0);
	while (dwarf_get_units(dw, cu, &cu, &version, &type, &cudie, &subdie) == 0) {
		if (type != DW_UT_compile && type != DW_UT_partial)
			continue;
		CHECK(n < u.n && u.v[n].die == dwarf_dieoffset(&cudie));
		if (n < u.n) {
			int code = dwarf_hasattr(&cudie, DW_AT_low_pc) ||
				   dwarf_hasattr(&cudie, DW_AT_ranges);
			CHECK(dwunits_has_code(&u, n) == code);
		}
		n++;
	}
	CHECK(n == u.n);
	/* The same ranges, each with the same unit. */
	Dwarf_Aranges *ar;
	size_t nar = 0;
	theirs.n = mine.n = 0;
	mine.u = &u;
	int lib = dwarf_getaranges(dw, &ar, &nar);
	for (size_t i = 0; lib == 0 && i < nar; i++) {
		Dwarf_Addr start;
		Dwarf_Word len;
		Dwarf_Off off;
		int listed = 0;
		if (dwarf_getarangeinfo(dwarf_onearange(ar, i), &start, &len, &off) != 0)
			continue;
		for (size_t k = 0; k < u.n; k++)
			listed |= u.v[k].die == off;
		/* symdwarf keeps the ranges of listed units only (a skeleton's are not) */
		if (listed)
			theirs.v[theirs.n++] = (struct rng){ start, start + len, off };
	}
	int rc = dwunits_aranges(elf, &u, add, &mine);
	CHECK(rc == 0 || (rc == 1 && theirs.n == 0));
	qsort(mine.v, mine.n, sizeof(mine.v[0]), rng_cmp);
	qsort(theirs.v, theirs.n, sizeof(theirs.v[0]), rng_cmp);
	CHECK(mine.n == theirs.n && memcmp(mine.v, theirs.v, mine.n * sizeof(mine.v[0])) == 0);
	dwunits_free(&u);
	dwarf_end(dw);
	elf_end(elf);
	close(fd);
	return n;
}

/* A copy of path with byte at the offset of section name + at set to v: the reader
 * declines (1) or still agrees where the damage is outside what it reads. */
static void damaged(const char *path, const char *name, size_t at, uint8_t v, int want)
{
	char copy[512];
	struct dwunits u;

	snprintf(copy, sizeof(copy), "%s/damaged", dir);
	CHECK(run("cp %s %s", path, copy) == 0);
	int fd = open(copy, O_RDWR);
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	CHECK(elf && elf_getshdrstrndx(elf, &shstrndx) == 0);
	while (elf && (scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && strcmp(elf_strptr(elf, shstrndx, sh.sh_name), name) == 0)
			break;
	CHECK(scn != NULL);
	if (scn && pwrite(fd, &v, 1, (off_t)(sh.sh_offset + at)) != 1)
		CHECK(0);
	elf_end(elf);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	CHECK(dwunits_list(elf, &u) == want);
	dwunits_free(&u);
	elf_end(elf);
	close(fd);
}

int main(void)
{
	static const char prog[] =
		"#include <stdio.h>\n"
		"static inline int sq(int x) { return x * x; }\n"
		"__attribute__((noinline)) int f(int x) { return sq(x) + 1; }\n"
		"int main(int c, char **v) { (void)v; printf(\"%d\\n\", f(c)); return 0; }\n";
	static const char other[] = "int g(int x) { return x * 3; }\n";
	static const char *const builds[] = {
		"cc -g -gdwarf-5 -O2", "cc -g -gdwarf-4 -O2", "cc -g -gdwarf-2 -O0",
		"clang -g -gdwarf-5 -O2", "clang -g -gdwarf-4 -O1", "cc -g -gsplit-dwarf -O2",
	};
	char path[512];

	elf_version(EV_CURRENT);
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 2;
	}
	FILE *f;
	snprintf(path, sizeof(path), "%s/prog.c", dir);
	if (!(f = fopen(path, "w")) || fputs(prog, f) < 0 || fclose(f) != 0)
		return 2;
	snprintf(path, sizeof(path), "%s/other.c", dir);
	if (!(f = fopen(path, "w")) || fputs(other, f) < 0 || fclose(f) != 0)
		return 2;
	for (size_t i = 0; i < sizeof(builds) / sizeof(builds[0]); i++) {
		const char *cc = builds[i];
		if (strncmp(cc, "clang", 5) == 0 && run("command -v clang >/dev/null") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/prog%zu", dir, i);
		CHECK(run("cd %s && %s -o %s prog.c other.c", dir, cc, path) == 0);
		/* Two units each (and libc's start files' where they carry DWARF); split
		 * DWARF leaves skeletons alone in the program, none of them listed. */
		size_t n = compare(path);
		CHECK(strstr(cc, "split") ? n == 0 : n >= 2);
	}
	/* Damage: a unit length past the section, an unknown version, a bad abbrev offset. */
	snprintf(path, sizeof(path), "%s/prog0", dir);
	damaged(path, ".debug_info", 3, 0x7f, 1);
	damaged(path, ".debug_info", 4, 9, 1);
	damaged(path, ".debug_info", 3, 0xff, 1);
	/* libc's debug file: thousands of units. */
	if (access("/usr/lib/debug/.build-id", R_OK) == 0 &&
	    run("f=$(find /usr/lib/debug/.build-id -name '*.debug' -size +1M | head -1) && "
		"[ -n \"$f\" ] && objcopy --decompress-debug-sections \"$f\" %s/big.debug",
		dir) == 0) {
		snprintf(path, sizeof(path), "%s/big.debug", dir);
		CHECK(compare(path) > 100);
	}
	run("rm -rf %s", dir);
	printf("dwunits: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
