/* collect/elfslim: the reduced copy of a module names every address as the original does
 * (functions, inlined frames, files and lines), gives the same unwind rows and the same
 * file-offset to address translation, and is a fraction of the original's size.  Checked
 * on this test program (DWARF and .symtab) and on the C library (stripped; its debug file,
 * when installed, is found by build id in both cases). */
#include "../../collect/elfid.h"
#include "../../collect/elfslim.h"
#include "../../unwind/cfi.h"
#include "../../unwind/symbolize.h"
#include "../../unwind/symmod.h"

#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

#define MAXF 16

static int
same_frames(const struct symframe *a, int na, const struct symframe *b, int nb)
{
	if (na != nb)
		return 0;
	for (int i = 0; i < na; i++)
		if (strcmp(a[i].name, b[i].name) || strcmp(a[i].system_name, b[i].system_name) ||
		    !a[i].file != !b[i].file || (a[i].file && strcmp(a[i].file, b[i].file)) ||
		    a[i].line != b[i].line || a[i].start_line != b[i].start_line)
			return 0;
	return 1;
}

static int
same_row(const struct cfirow *a, const struct cfirow *b)
{
	if (!a || !b)
		return !a && !b;
	return a->cfa == b->cfa && a->ra == b->ra && a->fp == b->fp && a->cfa_off == b->cfa_off &&
	       a->ra_off == b->ra_off && a->fp_off == b->fp_off;
}

/* The executable PT_LOAD ranges of path: [lo, hi) virtual, with their file offsets. */
struct seg {
	uint64_t vaddr, size, offset;
};

static int
exec_segments(const char *path, struct seg *out, int max)
{
	int fd = open(path, O_RDONLY), n = 0;
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	size_t nph = 0;
	if (e && elf_getphdrnum(e, &nph) == 0)
		for (size_t i = 0; i < nph && n < max; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD &&
			    (ph.p_flags & PF_X))
				out[n++] = (struct seg){ ph.p_vaddr, ph.p_memsz, ph.p_offset };
		}
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	return n;
}

static void
check_module(const char *path, int expect_dwarf)
{
	char dir[] = "/tmp/elfslim_test.XXXXXX", hex[41], cache[256], file[300];
	uint8_t id[20];
	struct stat st;
	int in = open(path, O_RDONLY | O_CLOEXEC);
	int idlen = in >= 0 ? elfid_build_id(in, id, sizeof(id)) : 0;

	if (in < 0 || idlen < 2) {
		printf("skip: %s (missing or without a build id)\n", path);
		if (in >= 0)
			close(in);
		return;
	}
	CHECK(mkdtemp(dir) != NULL);
	for (int i = 0; i < idlen; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	snprintf(cache, sizeof(cache), "%s/.build-id/%.2s", dir, hex);
	snprintf(file, sizeof(file), "%s/%s", cache, hex + 2);
	snprintf(cache, sizeof(cache), "%s/.build-id", dir);
	CHECK(mkdir(cache, 0755) == 0);
	snprintf(cache, sizeof(cache), "%s/.build-id/%.2s", dir, hex);
	CHECK(mkdir(cache, 0755) == 0);
	int out = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	uint64_t kept, size;
	char err[200];
	CHECK(elfslim_measure(in, &kept, &size) == 0 && kept < size);
	CHECK(out >= 0 && elfslim_write(in, out, err, sizeof(err)) == 0);
	close(out);
	close(in);
	CHECK(stat(file, &st) == 0 && (uint64_t)st.st_size * 2 < size);
	printf("%s: %llu bytes, reduced copy %llu\n", path, (unsigned long long)size,
	       (unsigned long long)st.st_size);

	/* The original, found by path; the copy, by build id alone (the path names nothing). */
	struct symbolizer *a = symbolizer_new(NULL, 0, NULL), *b = symbolizer_new(NULL, 0, dir);
	struct symmod *ma = symbolizer_module(a, path, id, (size_t)idlen);
	struct symmod *mb = symbolizer_module(b, "/nonexistent/module", id, (size_t)idlen);
	CHECK(ma && mb && strcmp(symmod_path(mb), file) == 0);
	CHECK(ma && mb && symmod_has_dwarf(ma) == symmod_has_dwarf(mb));
	CHECK(!expect_dwarf || (ma && symmod_has_dwarf(ma)));
	struct cfi_cache *ca = cfi_cache_new(NULL, 0), *cb = cfi_cache_new(NULL, 0);
	const struct cfitab *ta = ma ? cfi_cache_get(ca, ma) : NULL;
	const struct cfitab *tb = mb ? cfi_cache_get(cb, mb) : NULL;
	CHECK(ta && tb && cfitab_has_rows(ta) && cfitab_has_rows(tb));

	struct seg segs[8];
	int nseg = exec_segments(path, segs, 8), named = 0, differ = 0, rows_differ = 0;
	CHECK(nseg > 0);
	for (int s = 0; ma && mb && ta && tb && s < nseg; s++) {
		/* About 5,000 addresses over the code, through the file offsets of mappings. */
		uint64_t step = segs[s].size / 5000 + 1;
		for (uint64_t v = 0; v < segs[s].size; v += step) {
			uint64_t va, vb, offset = segs[s].offset + v;
			struct symframe fa[MAXF], fb[MAXF];
			if (symmod_offset_to_vaddr(ma, offset, &va) < 0 ||
			    symmod_offset_to_vaddr(mb, offset, &vb) < 0 || va != vb) {
				differ++;
				continue;
			}
			int na = symmod_lookup(ma, va, fa, MAXF), nb = symmod_lookup(mb, vb, fb, MAXF);
			named += na > 0;
			differ += !same_frames(fa, na, fb, nb);
			const struct cfitab *oa, *ob;
			rows_differ += !same_row(cfitab_lookup(ta, va, &oa), cfitab_lookup(tb, vb, &ob));
		}
	}
	/* the same FDEs were reached, and gave the same rows */
	CHECK(ta && tb && cfitab_rows(ta) > 100 && cfitab_rows(ta) == cfitab_rows(tb));
	CHECK(named > 1000);
	CHECK(differ == 0);
	CHECK(rows_differ == 0);
	cfi_cache_free(ca);
	cfi_cache_free(cb);
	symbolizer_free(a);
	symbolizer_free(b);
	unlink(file);
	rmdir(cache);
	snprintf(cache, sizeof(cache), "%s/.build-id", dir);
	rmdir(cache);
	rmdir(dir);
}

/* What is not an ELF file with section headers is refused with a reason. */
static void
test_refused(void)
{
	char path[] = "/tmp/elfslim_test.XXXXXX", err[200] = "";
	int fd = mkstemp(path);
	uint64_t kept, size;
	CHECK(fd >= 0 && write(fd, "#!/bin/sh\n", 10) == 10);
	CHECK(elfslim_measure(fd, &kept, &size) == -1);
	CHECK(elfslim_write(fd, fd, err, sizeof(err)) == -1 && strstr(err, "not an ELF"));
	close(fd);
	unlink(path);
}

int
main(void)
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	CHECK(n > 0);
	self[n > 0 ? n : 0] = 0;
	elf_version(EV_CURRENT);
	check_module(self, 1);
	check_module("/usr/lib/x86_64-linux-gnu/libc.so.6", 0);
	test_refused();
	printf("elfslim: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
