/* unwind/dwarfstack and unwind/cfi: programs compiled at run time capture their own
 * registers and 16 KiB of stack in their deepest function (the copy perf would take), and
 * the walk over that capture and the program's real mappings must find the whole call chain:
 * a six-function chain built -O2 -fomit-frame-pointer, a path through libc's qsort, a binary
 * without unwind tables (a failed walk, the leaf in partial mode), corrupt CFI bytes.  The
 * frameless steps (the callers a frame-pointer walk skips) read over the same capture give
 * the walk's first frames, and none is found where the leaf has a frame.  Also
 * prints the walk rate over the synthetic sample and the size of libc's table. */
#include "../../unwind/cfi.h"
#include "../../unwind/cfibuild.h"
#include "../../unwind/dwarfstack.h"
#include "../../unwind/symbolize.h"

#include <fcntl.h>
#include <gelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "run.h"

static char dir[] = "/tmp/dwarfstack_test.XXXXXX";

/* The child: main -> f1 .. f6 (or sortit -> qsort -> cmp) and a capture in the deepest
 * function: pc, sp, frame register, link register, the stack bytes, then its maps. */
static const char prog_c[] =
	"#include <stdint.h>\n"
	"#include <stdio.h>\n"
	"#include <stdlib.h>\n"
	"#define NI __attribute__((noinline, noclone))\n"
	"static const char *outpath;\n"
	"volatile int sink;\n"
	"NI static void dump(uint64_t pc, uint64_t sp, uint64_t fp, uint64_t lr)\n"
	"{\n"
	"\tchar line[1024];\n"
	"\tunsigned long lo, hi;\n"
	"\tuint64_t len = 16384;\n"
	"\tFILE *m = fopen(\"/proc/self/maps\", \"r\"), *o = fopen(outpath, \"w\");\n"
	"\tif (!m || !o) exit(3);\n"
	"\twhile (fgets(line, sizeof(line), m))\n"
	"\t\tif (sscanf(line, \"%lx-%lx\", &lo, &hi) == 2 && sp >= lo && sp < hi && hi - sp < len)\n"
	"\t\t\tlen = hi - sp;\n"
	"\tuint64_t h[5] = { pc, sp, fp, lr, len };\n"
	"\tfwrite(h, sizeof(h), 1, o);\n"
	"\tfwrite((void *)(uintptr_t)sp, 1, len, o);\n"
	"\trewind(m);\n"
	"\twhile (fgets(line, sizeof(line), m)) fputs(line, o);\n"
	"\tfclose(m);\n"
	"\tif (fclose(o)) exit(3);\n"
	"}\n"
	"#if defined(__x86_64__)\n"
	"#define CAPTURE() do { uint64_t pc, sp, fp; __asm__ volatile(\"lea 0(%%rip), %0\\n\\t\" \\\n"
	"\t\"mov %%rsp, %1\\n\\tmov %%rbp, %2\" : \"=&r\"(pc), \"=&r\"(sp), \"=&r\"(fp)); \\\n"
	"\tdump(pc, sp, fp, 0); } while (0)\n"
	"#else\n"
	"#define CAPTURE() do { uint64_t pc, sp, fp, lr; __asm__ volatile(\"adr %0, .\\n\\t\" \\\n"
	"\t\"mov %1, sp\\n\\tmov %2, x29\\n\\tmov %3, x30\" : \"=&r\"(pc), \"=&r\"(sp), \"=&r\"(fp), \\\n"
	"\t\"=&r\"(lr)); dump(pc, sp, fp, lr); } while (0)\n"
	"#endif\n"
	"NI int f6(int x) { CAPTURE(); sink = x; return x * 7 + sink; }\n"
	"NI int f5(int x) { int r = f6(x + 1); sink = r; return r * 3 + x; }\n"
	"NI int f4(int x) { int r = f5(x + 1); sink = r; return r * 3 + x; }\n"
	"NI int f3(int x) { int r = f4(x + 1); sink = r; return r * 3 + x; }\n"
	"NI int f2(int x) { int r = f3(x + 1); sink = r; return r * 3 + x; }\n"
	"NI int f1(int x) { int r = f2(x + 1); sink = r; return r * 3 + x; }\n"
	"static int captured;\n"
	"NI int cmp(const void *a, const void *b)\n"
	"{\n"
	"\tif (!captured++) CAPTURE();\n"
	"\treturn *(const int *)a - *(const int *)b;\n"
	"}\n"
	"NI int sortit(int n)\n"
	"{\n"
	"\tint v[64];\n"
	"\tfor (int i = 0; i < 64; i++) v[i] = (i * 37 + n) % 64;\n"
	"\tqsort(v, 64, sizeof(int), cmp);\n"
	"\tsink = v[0];\n"
	"\treturn v[1] + n;\n"
	"}\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"\toutpath = argv[1];\n"
	"\tint r = argc > 2 ? sortit(argc) : f1(argc);\n"
	"\tsink = r;\n"
	"\treturn 0;\n"
	"}\n";

struct capture {
	uint64_t pc, sp, fp, lr, len;
	uint8_t *stack;
	char *maps;
};

static int load_capture(const char *path, struct capture *c)
{
	FILE *f = fopen(path, "r");
	uint64_t h[5];
	long rest;

	memset(c, 0, sizeof(*c));
	if (!f || fread(h, sizeof(h), 1, f) != 1 || h[4] > 65536)
		goto fail;
	c->pc = h[0], c->sp = h[1], c->fp = h[2], c->lr = h[3], c->len = h[4];
	if (!(c->stack = malloc(c->len ? c->len : 1)) ||
	    fread(c->stack, 1, c->len, f) != c->len)
		goto fail;
	long at = ftell(f);
	fseek(f, 0, SEEK_END);
	rest = ftell(f) - at;
	fseek(f, at, SEEK_SET);
	if (!(c->maps = calloc(1, (size_t)rest + 1)) || fread(c->maps, 1, (size_t)rest, f) !=
							     (size_t)rest)
		goto fail;
	fclose(f);
	return 0;
fail:
	if (f)
		fclose(f);
	return -1;
}

/* The executable mappings of the capture, as FR_MMAP frames would give them. */
static void load_maps(struct proc *p, const char *maps)
{
	char line[1024], perms[8], path[900];
	unsigned long lo, hi, off;
	const char *s = maps;

	while (*s) {
		size_t n = strcspn(s, "\n");
		snprintf(line, sizeof(line), "%.*s", (int)n, s);
		s += n + (s[n] == '\n');
		path[0] = 0;
		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %899s", &lo, &hi, perms, &off, path) < 4 ||
		    perms[2] != 'x')
			continue;
		struct fr_mmap m = { .pid = 1, .start = lo, .len = hi - lo, .pgoff = off,
				     .prot = 4, .path = { path[0] ? path : "//anon",
							  (uint16_t)strlen(path[0] ? path : "//anon") } };
		CHECK(proc_map(p, &m) == 0);
	}
}

static struct fr_sample_regs smp;

static void make_sample(const struct capture *c, int with_fp)
{
	memset(&smp, 0, sizeof(smp));
	smp.pid = smp.tid = 1;
	smp.abi = 2;
	smp.period = 1000;
#if defined(__x86_64__)
	smp.reg_mask = (with_fp ? 1ull << DW_PERF_X86_BP : 0) | 1ull << DW_PERF_X86_SP |
		       1ull << DW_PERF_X86_IP;
	if (with_fp)
		smp.regs[smp.nregs++] = c->fp;
	smp.regs[smp.nregs++] = c->sp;
	smp.regs[smp.nregs++] = c->pc;
#else
	smp.reg_mask = (with_fp ? 1ull << DW_PERF_ARM64_X29 : 0) | 1ull << DW_PERF_ARM64_LR |
		       1ull << DW_PERF_ARM64_SP | 1ull << DW_PERF_ARM64_PC;
	if (with_fp)
		smp.regs[smp.nregs++] = c->fp;
	smp.regs[smp.nregs++] = c->lr;
	smp.regs[smp.nregs++] = c->sp;
	smp.regs[smp.nregs++] = c->pc;
#endif
	smp.stack_len = (uint32_t)c->len;
	smp.stack = c->stack;
}

/* The function name of a frame ("" when unknown). */
static const char *name_of(struct symbolizer *sym, const struct dwframe *f, int leaf)
{
	static struct symframe sf[16];
	uint64_t pc = leaf ? f->pc : f->pc - 1, vaddr;
	struct symmod *m = symbolizer_module(sym, f->map->path, NULL, 0);
	int n;

	if (!m || symmod_offset_to_vaddr(m, pc - f->map->start + f->map->pgoff, &vaddr) < 0 ||
	    (n = symmod_lookup(m, vaddr, sf, 16)) <= 0)
		return "";
	return sf[n - 1].name;
}

struct env {
	struct symbolizer *sym;
	struct proctab procs;
	struct proc *p;
	struct dwarfstack d;
	struct capture c;
};

static int setup(struct env *e, const char *prog, const char *args, int partial)
{
	char cap[600];

	memset(e, 0, sizeof(*e));
	snprintf(cap, sizeof(cap), "%s/%s.cap", dir, prog);
	if (run("cd %s && ./%s %s %s", dir, prog, cap, args) != 0 || load_capture(cap, &e->c) < 0)
		return -1;
	e->sym = symbolizer_new(NULL, 0, NULL);
	e->p = proctab_get(&e->procs, 1);
	load_maps(e->p, e->c.maps);
#if defined(__x86_64__)
	uint16_t machine = 62;
#else
	uint16_t machine = 183;
#endif
	return e->sym && dwarfstack_init(&e->d, machine, NULL, 0, partial) == 0 ? 0 : -1;
}

static void teardown(struct env *e)
{
	dwarfstack_release(&e->d);
	proctab_release(&e->procs);
	symbolizer_free(e->sym);
	free(e->c.stack);
	free(e->c.maps);
}

static void print_walk(struct env *e, const struct dwframe *f, unsigned n, int end)
{
	fprintf(stderr, "walk: %u frames, end %d\n", n, end);
	for (unsigned i = 0; i < n; i++)
		fprintf(stderr, "  %#llx %s (%s)\n", (unsigned long long)f[i].pc,
			name_of(e->sym, &f[i], i == 0), f[i].map->path);
}

static void test_chain(void)
{
	static const char *want[] = { "f6", "f5", "f4", "f3", "f2", "f1", "main" };
	struct dwframe f[DW_MAX_FRAMES];
	struct env e;
	int end;

	CHECK(setup(&e, "chain", "", 0) == 0);
	make_sample(&e.c, 1);
	unsigned n = dwarfstack_walk(&e.d, e.sym, e.p, &smp, f, DW_MAX_FRAMES, &end);
	CHECK(n >= 7);
	CHECK(end == DW_END_COMPLETE);
	for (unsigned i = 0; i < 7 && i < n; i++)
		CHECK(strcmp(name_of(e.sym, &f[i], i == 0), want[i]) == 0);
	if (n < 7 || end != DW_END_COMPLETE)
		print_walk(&e, f, n, end);
	/* the frame register is not needed: nothing in the chain bases its CFA on it */
	make_sample(&e.c, 0);
	unsigned n2 = dwarfstack_walk(&e.d, e.sym, e.p, &smp, f, DW_MAX_FRAMES, &end);
	CHECK(n2 == n && end == DW_END_COMPLETE);
	/* the frame limit */
	CHECK(dwarfstack_walk(&e.d, e.sym, e.p, &smp, f, 3, &end) == 3 &&
	      end == DW_END_TRUNCATED);
	/* a copy cut short ends the walk where the reads leave it */
	smp.stack_len = 16;
	n2 = dwarfstack_walk(&e.d, e.sym, e.p, &smp, f, DW_MAX_FRAMES, &end);
	CHECK(n2 >= 1 && n2 < n && end == DW_END_STACK);
	/* benchmark: the same sample over and over, walking only */
	make_sample(&e.c, 1);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	unsigned total = 0;
	for (int i = 0; i < 100000; i++)
		total += dwarfstack_walk(&e.d, e.sym, e.p, &smp, f, DW_MAX_FRAMES, &end);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("bench: 100000 walks of %u frames in %.3f s: %.0f samples/s\n", total / 100000, s,
	       100000 / s);
	teardown(&e);
}

/* dwarfstack_frameless over the -fomit-frame-pointer chain: from f6's pc, each function
 * has no frame, and reading each return address where it says gives the callers the full
 * walk finds.  In the same chain built with frame pointers, f6 has a frame: no step. */
static void test_frameless(void)
{
	struct dwframe f[DW_MAX_FRAMES];
	struct env e;
	int end, cfa_off, ra_off;

	CHECK(setup(&e, "chain", "", 0) == 0);
	make_sample(&e.c, 1);
	unsigned n = dwarfstack_walk(&e.d, e.sym, e.p, &smp, f, DW_MAX_FRAMES, &end);
	uint64_t look = e.c.pc, sp = 0;
	unsigned steps = 0;
	while (steps + 1 < n && steps < 5) {
		struct map *m = proc_find(e.p, look);
		if (!m || dwarfstack_frameless(&e.d, e.sym, m, look, &cfa_off, &ra_off) < 0 ||
		    sp + (uint64_t)ra_off + 8 > e.c.len)
			break;
		uint64_t ra;
		memcpy(&ra, e.c.stack + sp + ra_off, sizeof(ra));
		CHECK(ra == f[steps + 1].pc);
		sp += (uint64_t)cfa_off;
		look = ra - 1;
		steps++;
	}
#if defined(__x86_64__)
	CHECK(steps == 5); /* f5 .. f1 */
#else
	CHECK(steps == 0); /* x86_64 only */
#endif
	teardown(&e);

	CHECK(setup(&e, "chainfp", "", 0) == 0);
	struct map *m = proc_find(e.p, e.c.pc);
	CHECK(m && dwarfstack_frameless(&e.d, e.sym, m, e.c.pc, &cfa_off, &ra_off) < 0);
	teardown(&e);
}

static void test_qsort(void)
{
	struct dwframe f[DW_MAX_FRAMES];
	struct env e;
	int end;

	CHECK(setup(&e, "chain", "sort", 0) == 0);
	make_sample(&e.c, 1);
	unsigned n = dwarfstack_walk(&e.d, e.sym, e.p, &smp, f, DW_MAX_FRAMES, &end);
	CHECK(end == DW_END_COMPLETE);
	/* cmp, then one or more libc frames (qsort and its helpers), then sortit and main */
	unsigned i = 1, libc = 0;
	CHECK(n > 3 && strcmp(name_of(e.sym, &f[0], 1), "cmp") == 0);
	while (i < n && strstr(f[i].map->path, "libc")) {
		i++;
		libc++;
	}
	CHECK(libc >= 1);
	CHECK(i + 1 < n && strcmp(name_of(e.sym, &f[i], 0), "sortit") == 0 &&
	      strcmp(name_of(e.sym, &f[i + 1], 0), "main") == 0);
	if (libc < 1 || i + 1 >= n)
		print_walk(&e, f, n, end);
	size_t tables, rows, bytes;
	cfi_cache_stats(e.d.cfi, &tables, &rows, &bytes);
	printf("cfi: %zu tables, %zu rows, %zu bytes after the qsort walk\n", tables, rows,
	       bytes);
	teardown(&e);
}

/* Resolves smp into a stack through a resolver writing to /dev/null, times times. */
static int resolve_n(struct env *e, struct fr_stack *st, int times)
{
	struct stream_header h = { .version = 1, .clockid = 1, .e_machine = e->d.machine };
	struct stream_writer w;
	struct resolver r;
	int fd = open("/dev/null", O_WRONLY), rc = -1;

	if (fd >= 0 && stream_writer_open(&w, fd, "null", &h) == 0) {
		if (resolver_init(&r, &w, e->sym) == 0) {
			load_maps(proctab_get(&r.procs, 1), e->c.maps);
			for (int i = 0; i < times; i++)
				rc = dwarfstack_resolve(&e->d, &r, &smp, st);
			resolver_release(&r);
		}
		stream_flush(&w);
		stream_writer_release(&w);
	}
	if (fd >= 0)
		close(fd);
	return rc;
}

static int resolve(struct env *e, struct fr_stack *st)
{
	return resolve_n(e, st, 1);
}

static void test_resolve(void)
{
	static struct fr_stack st;
	struct env e;

	CHECK(setup(&e, "chain", "", 0) == 0);
	make_sample(&e.c, 1);
	smp.nkernel = 2;
	smp.kips[0] = 0xffffffff81000010ull;
	smp.kips[1] = 0xffffffff81000020ull;
	CHECK(resolve(&e, &st) == 0);
	CHECK(st.flags == STACK_USABLE && st.nlocs >= 9);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK(resolve_n(&e, &st, 100000) == 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("bench: 100000 resolved stacks (walk and location ids) in %.3f s: %.0f "
	       "samples/s\n", s, 100000 / s);
	/* no user registers: a kernel-only stack, usable */
	smp.abi = 0;
	CHECK(resolve(&e, &st) == 0 && st.flags == STACK_USABLE && st.nlocs == 2);
	smp.nkernel = 0;
	CHECK(resolve(&e, &st) == 0 && st.flags == STACK_EMPTY && st.nlocs == 0);
	/* a pc outside every mapping */
	make_sample(&e.c, 1);
	smp.regs[smp.nregs - 1] = 0x10;
	CHECK(resolve(&e, &st) == 0 && st.flags == (STACK_OUT_OF_MAPPING | STACK_EMPTY) &&
	      st.nlocs == 0);	/* as fpstack: nothing left */
	teardown(&e);
}

static void test_no_cfi(int partial)
{
	static struct fr_stack st;
	struct dwframe f[DW_MAX_FRAMES];
	struct env e;
	int end;

	CHECK(setup(&e, "nocfi", "", partial) == 0);
	/* without the frame register the walk cannot even try the frame-pointer record */
	make_sample(&e.c, 0);
	unsigned n = dwarfstack_walk(&e.d, e.sym, e.p, &smp, f, DW_MAX_FRAMES, &end);
	CHECK(n == 1 && end == DW_END_FAILED);
	CHECK(resolve(&e, &st) == 0);
	CHECK(st.flags == STACK_UNWIND_FAILED && st.nlocs == (partial ? 1 : 0));
	/* with it, whatever rbp holds must not make the stack usable */
	make_sample(&e.c, 1);
	CHECK(resolve(&e, &st) == 0 && !(st.flags & STACK_USABLE));
	printf("no unwind tables%s: flags %#x, %u locations\n", partial ? ", partial" : "",
	       st.flags, st.nlocs);
	if (st.flags & STACK_UNWIND_FAILED)
		CHECK(st.nlocs == (partial ? 1 : 0));
	teardown(&e);
}

/* The program's .eh_frame bytes and address. */
static uint8_t *eh_frame_of(const char *path, size_t *len, uint64_t *addr, uint16_t *mach)
{
	int fd = open(path, O_RDONLY);
	Elf *elf;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Ehdr eh;
	size_t shstr;
	uint8_t *out = NULL;

	elf_version(EV_CURRENT);
	if (fd < 0 || !(elf = elf_begin(fd, ELF_C_READ, NULL)))
		return NULL;
	if (gelf_getehdr(elf, &eh) && elf_getshdrstrndx(elf, &shstr) == 0) {
		*mach = eh.e_machine;
		while ((scn = elf_nextscn(elf, scn))) {
			Elf_Data *d;
			if (gelf_getshdr(scn, &sh) &&
			    strcmp(elf_strptr(elf, shstr, sh.sh_name), ".eh_frame") == 0 &&
			    (d = elf_getdata(scn, NULL)) && (out = malloc(d->d_size))) {
				memcpy(out, d->d_buf, d->d_size);
				*len = d->d_size;
				*addr = sh.sh_addr;
			}
		}
	}
	elf_end(elf);
	close(fd);
	return out;
}

static void test_corrupt(void)
{
	char path[600];
	size_t len = 0;
	uint64_t addr = 0;
	uint16_t mach = 0;

	snprintf(path, sizeof(path), "%s/chain", dir);
	uint8_t *orig = eh_frame_of(path, &len, &addr, &mach), *buf = malloc(len + 1);
	CHECK(orig && buf && len > 64);
	if (!orig || !buf)
		return;
	struct cfitab *t = cfitab_from_section(mach, orig, len, addr, 1);
	CHECK(t && t->nrows > 10);
	cfitab_free(t);
	srand(7);
	int built = 0;
	for (int i = 0; i < 3000; i++) {
		memcpy(buf, orig, len);
		for (int k = 0; k < 1 + i % 8; k++)
			buf[(size_t)rand() % len] = (uint8_t)rand();
		size_t cut = i % 5 == 0 ? (size_t)rand() % len : len;
		t = cfitab_from_section(mach, buf, cut, addr, i % 7 != 0);
		if (t) {
			built++;
			for (uint64_t a = addr - 0x2000; a < addr + 0x2000; a += 61)
				(void)cfitab_find(t, a);
		}
		cfitab_free(t);
	}
	CHECK(built == 3000);
	/* a table from nothing has no rows and answers nothing */
	t = cfitab_from_section(mach, orig, 0, addr, 1);
	CHECK(t && t->nrows == 0 && cfitab_find(t, addr) == NULL);
	cfitab_free(t);
	free(orig);
	free(buf);
}

static int rawrow_ref_cmp(const void *a, const void *b)
{
	const struct rawrow *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The run-merging sort gives qsort's order: rows in ascending runs as FDEs write them, runs
 * out of order, ties at FDE boundaries, one run, none, and random order. */
static void test_row_sort(void)
{
	size_t sizes[] = { 0, 1, 2, 7, 1000, 40000 };

	srand(11);
	for (size_t si = 0; si < sizeof(sizes) / sizeof(*sizes); si++) {
		for (int shape = 0; shape < 4; shape++) {
			size_t n = sizes[si];
			struct rawrow *a = calloc(n ? n : 1, sizeof(*a)), *b = calloc(n ? n : 1, sizeof(*b));
			CHECK(a && b);
			if (!a || !b)
				return;
			uint64_t at = 0x1000;
			for (size_t i = 0; i < n; i++) {
				if (shape == 0)	/* one ascending run */
					at += (uint64_t)(rand() % 3);
				else if (shape == 1 && rand() % 9 == 0)	/* an FDE elsewhere */
					at = 0x1000 + (uint64_t)(rand() % 100000);
				else if (shape == 2)	/* no order at all */
					at = 0x1000 + (uint64_t)(rand() % 50);
				else
					at += (uint64_t)(rand() % 4);
				if (shape == 3 && i % 64 == 63)	/* FDEs written backwards */
					at -= 300;
				a[i] = (struct rawrow){ .addr = at, .seq = (uint32_t)i,
							.cfa_off = (int32_t)(rand() % 1000) };
			}
			memcpy(b, a, n * sizeof(*a));
			cfi_sort_rows(a, n);
			if (n)
				qsort(b, n, sizeof(*b), rawrow_ref_cmp);
			CHECK(n == 0 || memcmp(a, b, n * sizeof(*a)) == 0);
			free(a);
			free(b);
		}
	}
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return ((double)(t1.tv_sec - t0->tv_sec) * 1e9 + (double)(t1.tv_nsec - t0->tv_nsec)) / 1e6;
}

static int same_rules(const struct cfitab *ta, const struct cfirow *a, const struct cfitab *tb,
		      const struct cfirow *b)
{
	size_t la = 0, lb = 0;

	if (!a || !b)
		return !a && !b;
	if (a->cfa != b->cfa || a->ra != b->ra || a->fp != b->fp)
		return 0;
	if (a->cfa == CFA_EXPR) {
		const uint8_t *x = cfitab_expr(ta, a->cfa_off, &la), *y = cfitab_expr(tb, b->cfa_off, &lb);
		return x && y && la == lb && memcmp(x, y, la) == 0;
	}
	return a->cfa_off == b->cfa_off && (a->ra >= REG_AT_EXPR || a->ra_off == b->ra_off) &&
	       (a->fp >= REG_AT_EXPR || a->fp_off == b->fp_off);
}

/* The lazy table answers as the full one at every row's address, the byte after and the
 * byte before: the FDEs it interprets on demand give the rows the whole build gives. */
static void compare_tables(const char *path)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return;
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct cfitab *full = elf ? cfitab_build_full(elf) : NULL;
	double full_ms = ms_since(&t0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct cfitab *lazy = elf ? cfitab_build(elf) : NULL;
	double lazy_ms = ms_since(&t0);
	CHECK(full && lazy && full->nrows > 10 && cfitab_has_rows(lazy) && cfitab_rows(lazy) == 0);
	size_t differ = 0, checked = 0;
	for (size_t i = 0; full && lazy && i < full->nrows; i++) {
		uint64_t a = full->base + full->rows[i].addr;
		for (int d = -1; d <= 1; d++) {
			const struct cfitab *owner;
			const struct cfirow *l = cfitab_lookup(lazy, a + (uint64_t)d, &owner);
			differ += !same_rules(full, cfitab_find(full, a + (uint64_t)d), owner, l);
			checked++;
		}
	}
	CHECK(differ == 0);
	if (full && lazy)
		printf("cfi: %s: %zu rows from %s built in %.1f ms; lazily, the FDE ranges in %.1f "
		       "ms; %zu lookups alike (%zu rows interpreted), %zu differ\n", path,
		       full->nrows, full->source, full_ms, lazy_ms, checked - differ,
		       cfitab_rows(lazy), differ);
	cfitab_free(full);
	cfitab_free(lazy);
	if (elf)
		elf_end(elf);
	close(fd);
}

static void test_libc_table(void)
{
	const char *cands[] = { "/lib/x86_64-linux-gnu/libc.so.6", "/lib/aarch64-linux-gnu/libc.so.6",
				"/usr/lib/x86_64-linux-gnu/libc.so.6" };
	char chain[600];

	for (size_t i = 0; i < sizeof(cands) / sizeof(*cands); i++) {
		if (access(cands[i], R_OK) == 0) {
			compare_tables(cands[i]);
			break;
		}
	}
	snprintf(chain, sizeof(chain), "%s/chain", dir);
	compare_tables(chain);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 2;
	}
	FILE *f;
	char path[600];
	snprintf(path, sizeof(path), "%s/prog.c", dir);
	if (!(f = fopen(path, "w")) || fputs(prog_c, f) < 0 || fclose(f) != 0)
		return 2;
	if (run("cd %s && cc -O2 -fomit-frame-pointer -o chain prog.c && "
		"cc -O2 -fomit-frame-pointer -fno-asynchronous-unwind-tables -fno-unwind-tables "
		"-o nocfi prog.c && cc -O2 -fno-omit-frame-pointer -o chainfp prog.c", dir) != 0) {
		fprintf(stderr, "cannot compile the test programs\n");
		return 1;
	}
	test_chain();
	test_frameless();
	test_qsort();
	test_resolve();
	test_no_cfi(0);
	test_no_cfi(1);
	test_corrupt();
	test_row_sort();
	test_libc_table();
	run("rm -rf %s", dir);
	printf("dwarfstack: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
