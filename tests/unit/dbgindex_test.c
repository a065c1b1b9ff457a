/*
 * A cached debug file's index (unwind/dbgindex.h): what is written reads back the same, a
 * file that breaks any of the orders and bounds the reader relies on is refused, and the
 * symbol index rebuilt from it is the one built from the symbol table (libc's debug file,
 * where libc6-dbg is installed).
 */
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../unwind/dbgindex.h"
#include "../../unwind/symelf.h"
#include "le.h"

#include "check.h"

static uint64_t dies[3] = { 11, 400, 2000 };
static uint8_t state[3] = { DBGIX_LAZY, DBGIX_EAGER, DBGIX_NONE };
static struct dbgix_range ranges[3] = { { 0x1000, 0x1800, 0 }, { 0x1000, 0x1100, 0 },
					{ 0x1800, 0x1900, 0 } };
static struct dbgix_func funcs[2] = { { 0x1000, 0x1040, 1 }, { 0x1040, 0x1100, 9 } };
static const struct dbgindex good = { 9000, 4000, dies, state, 3, ranges, 3, funcs, 2, 72, 64 };

/* Offsets of the parts in good's bytes. */
enum { UNITS = 48, STATES = UNITS + 24, RANGES = STATES + 8, FUNCS = RANGES + 3 * 24 };

/* The bytes of good, changed at off by v (width 1, 4 or 8), then parsed: 0 or -1. */
static int
parse_changed(size_t off, unsigned width, uint64_t v)
{
	size_t n = 0;
	uint8_t *p = dbgindex_encode(&good, &n);
	struct dbgindex ix;
	int rc;

	if (!p)
		return -2;
	if (width == 1)
		p[off] = (uint8_t)v;
	else if (width == 4)
		st32(p + off, (uint32_t)v);
	else
		st64(p + off, v);
	rc = dbgindex_parse(p, n, 9000, &ix);
	if (rc == 0)
		dbgindex_free(&ix);
	free(p);
	return rc;
}

static void
test_round_trip(void)
{
	size_t n = 0;
	uint8_t *p = dbgindex_encode(&good, &n);
	struct dbgindex ix;

	CHECK(p != NULL && n == FUNCS + 2 * 24);
	CHECK(dbgindex_parse(p, n, 9000, &ix) == 0);
	CHECK(ix.ninfo == 4000 && ix.nunits == 3 && ix.nranges == 3 && ix.nfuncs == 2);
	CHECK(memcmp(ix.dies, dies, sizeof(dies)) == 0 && memcmp(ix.state, state, 3) == 0);
	CHECK(ix.ranges[2].lo == 0x1800 && ix.ranges[2].hi == 0x1900 && ix.ranges[2].unit == 0);
	CHECK(ix.funcs[1].lo == 0x1040 && ix.funcs[1].hi == 0x1100 && ix.funcs[1].name == 9);
	CHECK(ix.strndx == 72 && ix.strsize == 64);
	dbgindex_free(&ix);
	/* another copy: a miss */
	CHECK(dbgindex_parse(p, n, 9001, &ix) < 0);
	/* cut short, or longer than its counts say */
	CHECK(dbgindex_parse(p, n - 1, 9000, &ix) < 0);
	CHECK(dbgindex_parse(p, 16, 9000, &ix) < 0);
	free(p);
	/* through a file, as the cache reads it */
	char path[] = "/tmp/dbgindex_test_XXXXXX";
	int fd = mkstemp(path);
	p = dbgindex_encode(&good, &n);
	CHECK(fd >= 0 && p && write(fd, p, n) == (ssize_t)n);
	close(fd);
	CHECK(dbgindex_read(path, 9000, &ix) == 0 && ix.nunits == 3 && ix.nfuncs == 2);
	dbgindex_free(&ix);
	CHECK(dbgindex_read("/nonexistent/x.index", 9000, &ix) < 0);
	unlink(path);
	free(p);
}

static void
test_refused(void)
{
	CHECK(parse_changed(0, 1, 'X') < 0);                    /* magic */
	CHECK(parse_changed(24, 4, 4) < 0);                     /* unit count off */
	CHECK(parse_changed(28, 4, 2) < 0);                     /* range count off */
	CHECK(parse_changed(32, 4, 3) < 0);                     /* function count off */
	CHECK(parse_changed(24, 4, DBGIX_MAX_UNITS + 1) < 0);
	CHECK(parse_changed(UNITS + 8, 8, 4000) < 0);           /* a DIE past .debug_info */
	CHECK(parse_changed(UNITS + 8, 8, 11) < 0);             /* units out of order */
	CHECK(parse_changed(STATES + 1, 1, 3) < 0);             /* an unknown state */
	CHECK(parse_changed(STATES, 1, DBGIX_NONE) < 0);        /* ranges of a unit not lazy */
	CHECK(parse_changed(STATES + 3, 1, 1) < 0);             /* padding not zero */
	CHECK(parse_changed(RANGES + 16, 4, 3) < 0);            /* a range's unit unknown */
	CHECK(parse_changed(RANGES + 8, 8, 0x1000) < 0);        /* lo == hi */
	CHECK(parse_changed(RANGES + 2 * 24, 8, 0x800) < 0);    /* ranges out of order */
	CHECK(parse_changed(RANGES + 20, 4, 1) < 0);            /* padding not zero */
	CHECK(parse_changed(FUNCS + 24, 8, 0x1000) < 0);        /* two functions at one address */
	CHECK(parse_changed(FUNCS + 16, 4, 64) < 0);            /* a name past the table */
	CHECK(parse_changed(FUNCS + 20, 4, 1) < 0);             /* padding not zero */
	CHECK(parse_changed(RANGES, 8, 0x1000) == 0);           /* the unchanged bytes pass */
}

/* libc's debug file, as libc6-dbg installs it: its path into buf, or 0 when missing. */
static int
libc_debug(char *buf, size_t len)
{
	uint8_t id[SYM_BUILD_ID_MAX];
	int fd = open("/lib/x86_64-linux-gnu/libc.so.6", O_RDONLY);
	if (fd < 0)
		fd = open("/lib/aarch64-linux-gnu/libc.so.6", O_RDONLY);
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	size_t n = e ? symelf_build_id(e, id) : 0;
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	if (n < 2)
		return 0;
	int k = snprintf(buf, len, "/usr/lib/debug/.build-id/%02x/", id[0]);
	for (size_t i = 1; i < n; i++)
		k += snprintf(buf + k, len - (size_t)k, "%02x", id[i]);
	snprintf(buf + k, len - (size_t)k, ".debug");
	return access(buf, R_OK) == 0;
}

/* The symbol index rebuilt from its functions is the one built from the table. */
static void
test_symbols(void)
{
	char path[256];
	if (!libc_debug(path, sizeof(path))) {
		printf("dbgindex_test: no libc debug file, symbols not compared\n");
		return;
	}
	int fd = open(path, O_RDONLY);
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	struct symtab_index a, b;
	CHECK(e && symtab_index_build(&a, e) == 0 && a.n > 1000 && a.nstrs == 1);
	struct dbgix_func *f = calloc(a.n, sizeof(*f));
	CHECK(f != NULL);
	for (size_t i = 0; f && i < a.n; i++)
		f[i] = (struct dbgix_func){ a.v[i].lo, a.v[i].hi,
					    (uint32_t)(a.v[i].sys - a.strs[0]) };
	CHECK(symtab_index_from(&b, e, f, a.n, a.str0_scn, a.str0_size) == 0 && b.n == a.n);
	size_t same = 0;
	for (size_t i = 0; i < a.n && i < b.n; i++)
		same += a.v[i].lo == b.v[i].lo && a.v[i].hi == b.v[i].hi &&
			strcmp(a.v[i].sys, b.v[i].sys) == 0;
	CHECK(same == a.n);
	symtab_index_free(&b);
	/* another section, or another size: refused */
	CHECK(symtab_index_from(&b, e, f, a.n, a.str0_scn, a.str0_size + 1) < 0);
	CHECK(symtab_index_from(&b, e, f, a.n, 1, a.str0_size) < 0);
	free(f);
	symtab_index_free(&a);
	elf_end(e);
	close(fd);
}

int
main(void)
{
	elf_version(EV_CURRENT);
	test_round_trip();
	test_refused();
	test_symbols();
	printf("dbgindex_test: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
