/*
 * perfgen SCENARIO OUT EXE [N]: writes a file-mode perf.data that reproduces one kind of
 * capture this machine cannot record (no hardware PMU, no LBR, no hybrid CPU, no
 * simpleperf).  The samples fall in functions of EXE, a bundled workload (cpu_split), mapped
 * as its PT_LOAD segments say at 0x555555554000 in pid 100 ("cpu_split"), so the usual
 * stages name them:
 *
 *   hybrid    cpu_atom/cycles/ with N samples in hot_c, cpu_core/cycles/ with 6 in hot_a
 *             and 3 in hot_b (EVENT_DESC names, PMU_MAPPINGS, extended hardware types)
 *   lbr       --call-graph lbr: 10 user-mode samples in hot_a whose callchain is a kernel
 *             frame then a wrong user frame; the branch stack holds the calls from
 *             dispatch and run_worker
 *   cpumode   5 samples with a kernel cpumode at an IP in hot_a, 5 with a user cpumode at
 *             kernel IP 0xffffffff81001234 (_text is at 0xffffffff81000000)
 *   units     cycles: 3 samples in hot_a of 1000; instructions: 2 in hot_b of 5000
 *   group     {cycles,instructions}:S read with PERF_SAMPLE_READ: 10 leader samples of
 *             period 2000, 5 in hot_a (cycles +3000, instructions +1000 each) and 5 in hot_b
 *             (cycles +1000, instructions +9000)
 *   sp3       simpleperf layout: three processes (pids 201-203) whose executables
 *             /data/local/tmp/{one,two,three} are all mapped at 0x400000, with their
 *             symbols (f_one, f_two, f_three at 0x400500) in the FILE section; 4, 2 and 1
 *             samples at 0x400510 (EXE is not read).  Their BUILD_ID entries are zeros, as
 *             simpleperf writes for files it cannot read; with N = 1, distinct ids
 *
 *   perfgen lbr lbr.data .output/workloads/cpu_split
 *
 * Built by tests/import.bats with -lelf.
 */
#include <err.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BASE 0x555555554000ull
#define KADDR 0xffffffff81001234ull
#define PID 100u
#define ATTR_SIZE 128
#define CTX_KERNEL 0xffffffffffffff80ull
#define CTX_USER 0xfffffffffffffe00ull

enum { S_IP = 1, S_TID = 2, S_TIME = 4, S_READ = 16, S_CALLCHAIN = 32, S_ID = 64,
       S_PERIOD = 256, S_BRANCH = 2048 };
enum { F_FREQ = 1 << 10, F_SAMPLE_ID_ALL = 1 << 18 };

struct buf {
	uint8_t *p;
	size_t n, cap;
};

static void
put(struct buf *b, const void *v, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2 + 4096;
		if (!(b->p = realloc(b->p, b->cap)))
			err(1, "realloc");
	}
	memcpy(b->p + b->n, v, n);
	b->n += n;
}

static void u64(struct buf *b, uint64_t v) { put(b, &v, 8); }
static void u32(struct buf *b, uint32_t v) { put(b, &v, 4); }
static void u16(struct buf *b, uint16_t v) { put(b, &v, 2); }

/* s NUL-terminated, padded with zeros to a multiple of align. */
static void
padded(struct buf *b, const char *s, size_t align)
{
	size_t n = strlen(s) + 1, p = (n + align - 1) / align * align;
	put(b, s, n);
	while (n++ < p)
		put(b, "", 1);
}

/* perf_header_string: u32 length, then the padded string. */
static void
hstring(struct buf *b, const char *s)
{
	size_t n = (strlen(s) + 1 + 63) / 64 * 64;
	u32(b, (uint32_t)n);
	padded(b, s, 64);
}

struct attr {
	uint32_t type;
	uint64_t config, period, sample_type, read_format, flags, branch_type;
	uint64_t id;
	const char *name;
};

static struct attr attrs[4];
static size_t nattrs;
static struct buf data, feat[256];
static uint64_t now = 1000000000;

static size_t
rec_begin(uint32_t type, uint16_t misc)
{
	size_t at = data.n;
	u32(&data, type);
	u16(&data, misc);
	u16(&data, 0);
	return at;
}

static void
rec_end(size_t at)
{
	uint16_t size = (uint16_t)(data.n - at);
	memcpy(data.p + at + 6, &size, 2);
}

/* sample_id_all trailer in attr 0's layout: TID, TIME, ID. */
static void
trailer(uint32_t pid)
{
	u32(&data, pid);
	u32(&data, pid);
	u64(&data, now);
	if (attrs[0].sample_type & S_ID)
		u64(&data, attrs[0].id);
}

static void
comm(uint32_t pid, const char *name)
{
	size_t r = rec_begin(3, 0x2000 /* exec */);
	u32(&data, pid);
	u32(&data, pid);
	padded(&data, name, 8);
	trailer(pid);
	rec_end(r);
}

static void
mmap2(uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff, const char *path)
{
	size_t r = rec_begin(10, 2 /* user */);
	u32(&data, pid);
	u32(&data, pid);
	u64(&data, start);
	u64(&data, len);
	u64(&data, pgoff);
	u32(&data, 0), u32(&data, 0), u64(&data, 0), u64(&data, 0); /* maj min ino gen */
	u32(&data, 5 /* r-x */);
	u32(&data, 2 /* private */);
	padded(&data, path, 8);
	trailer(pid);
	rec_end(r);
}

struct sample {
	const struct attr *a;
	uint16_t misc;
	uint32_t pid;
	uint64_t ip, period;
	const uint64_t *chain, *reads;  /* reads: value, id pairs */
	size_t nchain, nreads;
	const uint64_t *branches;       /* from, to pairs */
	size_t nbranches;
};

static void
sample(const struct sample *s)
{
	uint64_t st = s->a->sample_type;
	size_t r = rec_begin(9, s->misc);
	now += 1000000;
	if (st & S_IP)
		u64(&data, s->ip);
	if (st & S_TID)
		u32(&data, s->pid), u32(&data, s->pid);
	if (st & S_TIME)
		u64(&data, now);
	if (st & S_ID)
		u64(&data, s->a->id);
	if (st & S_PERIOD)
		u64(&data, s->period);
	if (st & S_READ) { /* PERF_FORMAT_GROUP | PERF_FORMAT_ID */
		u64(&data, s->nreads);
		for (size_t i = 0; i < 2 * s->nreads; i++)
			u64(&data, s->reads[i]);
	}
	if (st & S_CALLCHAIN) {
		u64(&data, s->nchain);
		for (size_t i = 0; i < s->nchain; i++)
			u64(&data, s->chain[i]);
	}
	if (st & S_BRANCH) {
		u64(&data, s->nbranches);
		u64(&data, 0); /* hw_idx */
		for (size_t i = 0; i < s->nbranches; i++)
			u64(&data, s->branches[2 * i]), u64(&data, s->branches[2 * i + 1]),
				u64(&data, 0);
	}
	rec_end(r);
}

/* ---- the executable ---- */

static uint64_t exe_start, exe_len, exe_pgoff;
static const char *exe_path;
static Elf *exe_elf;

static void
open_exe(const char *path)
{
	int fd = open(path, O_RDONLY);
	size_t n;
	exe_path = path;
	if (fd < 0 || elf_version(EV_CURRENT) == EV_NONE ||
	    !(exe_elf = elf_begin(fd, ELF_C_READ, NULL)) || elf_getphdrnum(exe_elf, &n) < 0)
		errx(1, "%s: not an ELF file", path);
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(exe_elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
			exe_start = BASE + (ph.p_vaddr & ~0xfffull);
			exe_pgoff = ph.p_offset & ~0xfffull;
			exe_len = (ph.p_vaddr + ph.p_memsz - (ph.p_vaddr & ~0xfffull) + 0xfff) & ~0xfffull;
			return;
		}
	}
	errx(1, "%s: no executable segment", path);
}

/* The address of byte off of function name, as mapped. */
static uint64_t
fn(const char *name, uint64_t off)
{
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(exe_elf, scn));) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *s;
			if (gelf_getsym(d, (int)i, &sym) && (s = elf_strptr(exe_elf, sh.sh_link, sym.st_name)) &&
			    !strcmp(s, name) && GELF_ST_TYPE(sym.st_info) == STT_FUNC)
				return BASE + sym.st_value + (off < sym.st_size ? off : 0);
		}
	}
	errx(1, "%s: no function %s", exe_path, name);
}

/* perf's kernel map: [kernel.kallsyms]_text at _text, pgoff _text (the relocation). */
static void
kernel_map(void)
{
	size_t r = rec_begin(1, 1 /* kernel */);
	u32(&data, UINT32_MAX);
	u32(&data, 0);
	u64(&data, 0xffffffff81000000ull);
	u64(&data, 0x1000000);
	u64(&data, 0xffffffff81000000ull);
	padded(&data, "[kernel.kallsyms]_text", 8);
	trailer(0);
	rec_end(r);
}

static void
start_process(void)
{
	kernel_map();
	comm(PID, "cpu_split");
	mmap2(PID, exe_start, exe_len, exe_pgoff, exe_path);
}

/* ---- the file ---- */

static void
attr_bytes(struct buf *b, const struct attr *a)
{
	size_t at = b->n;
	u32(b, a->type);
	u32(b, ATTR_SIZE);
	u64(b, a->config);
	u64(b, a->period);
	u64(b, a->sample_type);
	u64(b, a->read_format);
	u64(b, a->flags | F_SAMPLE_ID_ALL);
	u32(b, 0), u32(b, 0), u64(b, 0), u64(b, 0); /* wakeup, bp_type, config1, config2 */
	u64(b, a->branch_type);
	while (b->n < at + ATTR_SIZE)
		put(b, "", 1);
}

static void
features(void)
{
	hstring(&feat[4], "6.1.0-perfgen");
	hstring(&feat[6], "x86_64");
	if (attrs[0].name) {
		struct buf *d = &feat[12];
		u32(d, (uint32_t)nattrs);
		u32(d, ATTR_SIZE);
		for (size_t i = 0; i < nattrs; i++) {
			attr_bytes(d, &attrs[i]);
			u32(d, 1);
			hstring(d, attrs[i].name);
			u64(d, attrs[i].id);
		}
	}
}

static void
write_file(const char *out)
{
	struct buf f = { 0 };
	uint64_t bits[4] = { 0 };
	size_t ids = 104, as = ids + 8 * nattrs, ds = as + nattrs * (ATTR_SIZE + 16);
	features();
	for (int i = 0; i < 256; i++)
		if (feat[i].n)
			bits[i / 64] |= 1ull << (i % 64);
	put(&f, "PERFILE2", 8);
	u64(&f, 104);
	u64(&f, ATTR_SIZE + 16);
	u64(&f, as), u64(&f, nattrs * (ATTR_SIZE + 16));
	u64(&f, ds), u64(&f, data.n);
	u64(&f, 0), u64(&f, 0);
	put(&f, bits, sizeof(bits));
	for (size_t i = 0; i < nattrs; i++)
		u64(&f, attrs[i].id);
	for (size_t i = 0; i < nattrs; i++) {
		attr_bytes(&f, &attrs[i]);
		u64(&f, ids + 8 * i), u64(&f, 8);
	}
	put(&f, data.p, data.n);
	size_t nf = 0, at;
	for (int i = 0; i < 256; i++)
		nf += feat[i].n != 0;
	at = f.n + 16 * nf;
	for (int i = 0; i < 256; i++)
		if (feat[i].n) {
			u64(&f, at), u64(&f, feat[i].n);
			at += feat[i].n;
		}
	for (int i = 0; i < 256; i++)
		put(&f, feat[i].p, feat[i].n);
	FILE *o = fopen(out, "wb");
	if (!o || fwrite(f.p, 1, f.n, o) != f.n || fclose(o))
		err(1, "%s", out);
}

static struct attr *
add_attr(uint32_t type, uint64_t config, uint64_t st, const char *name)
{
	struct attr *a = &attrs[nattrs++];
	*a = (struct attr){ .type = type, .config = config, .period = 4000, .flags = F_FREQ,
			    .sample_type = st, .id = 1000 + nattrs, .name = name };
	return a;
}

/* ---- the scenarios ---- */

static void
hybrid(int natom)
{
	uint64_t st = S_IP | S_TID | S_TIME | S_ID | S_PERIOD;
	struct attr *atom = add_attr(0, 8ull << 32, st, "cpu_atom/cycles/");
	struct attr *core = add_attr(0, 4ull << 32, st, "cpu_core/cycles/");
	struct buf *p = &feat[16];
	u32(p, 2);
	u32(p, 4), hstring(p, "cpu_core");
	u32(p, 8), hstring(p, "cpu_atom");
	start_process();
	for (int i = 0; i < 9; i++)
		sample(&(struct sample){ .a = core, .misc = 2, .pid = PID,
					 .ip = fn(i < 6 ? "hot_a" : "hot_b", 8), .period = 1000 });
	for (int i = 0; i < natom; i++)
		sample(&(struct sample){ .a = atom, .misc = 2, .pid = PID, .ip = fn("hot_c", 8),
					 .period = 1000 });
}

static void
lbr(void)
{
	struct attr *a = add_attr(0, 0, S_IP | S_TID | S_TIME | S_PERIOD | S_CALLCHAIN | S_BRANCH,
				  NULL);
	/* PERF_SAMPLE_BRANCH_USER | CALL_STACK | NO_FLAGS | NO_CYCLES | HW_INDEX */
	a->branch_type = 1 | 1 << 11 | 1 << 14 | 1 << 15 | 1 << 17;
	start_process();
	uint64_t chain[] = { CTX_KERNEL, KADDR, CTX_USER, fn("hot_b", 8), fn("main", 4) };
	uint64_t br[] = { fn("dispatch", 16), fn("hot_a", 0), fn("run_worker", 16),
			  fn("dispatch", 0) };
	for (int i = 0; i < 10; i++)
		sample(&(struct sample){ .a = a, .misc = 2, .pid = PID, .ip = fn("hot_a", 8),
					 .period = 1000, .chain = chain, .nchain = 5,
					 .branches = br, .nbranches = 2 });
}

static void
cpumode(void)
{
	struct attr *a = add_attr(1, 0, S_IP | S_TID | S_TIME | S_PERIOD, NULL);
	start_process();
	for (int i = 0; i < 10; i++)
		sample(&(struct sample){ .a = a, .misc = i < 5 ? 1 : 2, .pid = PID,
					 .ip = i < 5 ? fn("hot_a", 8) : KADDR, .period = 250000 });
}

static void
units(void)
{
	uint64_t st = S_IP | S_TID | S_TIME | S_ID | S_PERIOD;
	struct attr *c = add_attr(0, 0, st, "cycles"), *in = add_attr(0, 1, st, "instructions");
	start_process();
	for (int i = 0; i < 3; i++)
		sample(&(struct sample){ .a = c, .misc = 2, .pid = PID, .ip = fn("hot_a", 8),
					 .period = 1000 });
	for (int i = 0; i < 2; i++)
		sample(&(struct sample){ .a = in, .misc = 2, .pid = PID, .ip = fn("hot_b", 8),
					 .period = 5000 });
}

static void
group(void)
{
	uint64_t st = S_IP | S_TID | S_TIME | S_ID | S_PERIOD | S_READ;
	struct attr *c = add_attr(0, 0, st, "cycles"), *in = add_attr(0, 1, st, "instructions");
	c->read_format = in->read_format = 8 | 4; /* PERF_FORMAT_GROUP | PERF_FORMAT_ID */
	c->flags = in->flags = 0;
	c->period = 2000;
	in->period = 0;
	start_process();
	uint64_t vc = 0, vi = 0;
	for (int i = 0; i < 10; i++) {
		vc += i % 2 ? 1000 : 3000;
		vi += i % 2 ? 9000 : 1000;
		uint64_t reads[] = { vc, c->id, vi, in->id };
		sample(&(struct sample){ .a = c, .misc = 2, .pid = PID,
					 .ip = fn(i % 2 ? "hot_b" : "hot_a", 8), .period = 2000,
					 .reads = reads, .nreads = 2 });
	}
}

static void
mmap1(uint32_t pid, uint64_t start, uint64_t len, const char *path)
{
	size_t r = rec_begin(1, 2);
	u32(&data, pid);
	u32(&data, pid);
	u64(&data, start);
	u64(&data, len);
	u64(&data, 0);
	padded(&data, path, 8);
	trailer(pid);
	rec_end(r);
}

/* simpleperf's FILE section entry of an ELF file with one symbol, and its build id. */
static void
sp_file(const char *path, const char *sym, uint8_t idbyte)
{
	struct buf e = { 0 }, *f = &feat[128], *b = &feat[2];
	padded(&e, path, 1);
	u32(&e, 2);             /* DSO_ELF_FILE */
	u64(&e, 0x400000);      /* min_vaddr */
	u32(&e, 1);
	u64(&e, 0x400500), u32(&e, 0x40);
	padded(&e, sym, 1);
	u64(&e, 0);             /* file offset of min_vaddr */
	u32(f, (uint32_t)e.n);
	put(f, e.p, e.n);
	free(e.p);
	size_t at = b->n;
	u32(b, 67), u16(b, 2), u16(b, 0);
	u32(b, UINT32_MAX);
	uint8_t id[24] = { 0 };
	memset(id, idbyte, 20); /* 0: no build id read */
	put(b, id, sizeof(id));
	padded(b, path, 64);
	uint16_t size = (uint16_t)(b->n - at);
	memcpy(b->p + at + 6, &size, 2);
}

static void
sp3(int distinct)
{
	static const char *const path[] = { "/data/local/tmp/one", "/data/local/tmp/two",
					    "/data/local/tmp/three" };
	static const char *const sym[] = { "f_one", "f_two", "f_three" };
	struct attr *a = add_attr(1, 0, S_IP | S_TID | S_TIME | S_PERIOD, NULL);
	for (uint32_t p = 0; p < 3; p++) {
		comm(201 + p, sym[p] + 2);
		mmap1(201 + p, 0x400000, 0x1000, path[p]);
		sp_file(path[p], sym[p], (uint8_t)(distinct ? 0x11 * (p + 1) : 0));
	}
	for (uint32_t p = 0; p < 3; p++)
		for (int i = 0; i < 4 >> p; i++)
			sample(&(struct sample){ .a = a, .misc = 2, .pid = 201 + p, .ip = 0x400510,
						 .period = 250000 });
	static const char meta[] = "simpleperf_version\0" "1.0\0" "event_type_info\0"
				   "cpu-clock,1,0";
	put(&feat[129], meta, sizeof(meta));
}

int
main(int argc, char **argv)
{
	if (argc < 4)
		errx(2, "usage: perfgen hybrid|lbr|cpumode|units|group|sp3 OUT EXE [N]");
	const char *s = argv[1];
	if (strcmp(s, "sp3"))
		open_exe(argv[3]);
	if (!strcmp(s, "hybrid"))
		hybrid(argc > 4 ? atoi(argv[4]) : 0);
	else if (!strcmp(s, "lbr"))
		lbr();
	else if (!strcmp(s, "cpumode"))
		cpumode();
	else if (!strcmp(s, "units"))
		units();
	else if (!strcmp(s, "group"))
		group();
	else if (!strcmp(s, "sp3"))
		sp3(argc > 4 && atoi(argv[4]));
	else
		errx(2, "unknown scenario '%s'", s);
	write_file(argv[2]);
	return 0;
}
