/* unwind/fpstack and procmaps: how frame-pointer stacks are classified (usable, empty, out of
 * mapping, truncated, cyclic), kernel frames before user frames, return addresses resolved at
 * address - 1, and how a new mmap replaces or splits older mappings.  The processes are
 * synthetic: their mapped files do not exist, so locations carry addresses but no names. */
#include "../../unwind/fpstack.h"
#include "../../unwind/procmaps.h"
#include "../../unwind/resolve.h"
#include "../../unwind/symbolize.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stream.h"

#include "check.h"

#define PID 100
#define EXE_START 0x400000ull
#define EXE_END 0x410000ull
#define LIB_START 0x7f0000000000ull
#define LIB_END 0x7f0000020000ull
#define KADDR 0xffffffff81000000ull

/* A resolver writing to a temp file, and what was read back from that file. */
struct fixture {
	char path[64];
	int fd;
	struct stream_writer w;
	struct symbolizer *sym;
	struct resolver r;
};

#define MAXID 1024
static struct {
	int defs;               /* FR_LOCATION frames with this id: must be exactly 1 */
	uint32_t mapping_id;
	uint64_t address;
	uint16_t nlines;
	uint32_t function_id;   /* of the first line */
} locs[MAXID];
static char funcs[MAXID][64];
static struct {
	int defs;
	uint32_t flags, pid;
	uint64_t start, limit, offset;
	char path[64];
} maps[MAXID];

static struct fr_sample smp;
static struct fr_stack out;

static void
fixture_open(struct fixture *fx)
{
	static const struct stream_header h = { 1, 1, 0, 42, 62 };

	snprintf(fx->path, sizeof(fx->path), "/tmp/fpstack_test.XXXXXX");
	fx->fd = mkstemp(fx->path);
	if (fx->fd < 0 || stream_writer_open(&fx->w, fx->fd, "t", &h) < 0)
		abort();
	fx->sym = symbolizer_new(NULL, 0, NULL);
	if (!fx->sym || resolver_init(&fx->r, &fx->w, fx->sym) < 0)
		abort();
	struct proc *p = proctab_get(&fx->r.procs, PID);
	struct fr_mmap exe = { .pid = PID, .start = EXE_START, .len = EXE_END - EXE_START,
			       .path = { "/nonexistent/exe", 16 } };
	struct fr_mmap lib = { .pid = PID, .start = LIB_START, .len = LIB_END - LIB_START,
			       .pgoff = 0x2000, .path = { "/nonexistent/lib.so", 19 } };
	CHECK(p && proc_map(p, &exe) == 0 && proc_map(p, &lib) == 0);
	/* collect sends the kernel symbols its samples touched. */
	struct fr_ksym ks = { KADDR + 0x1000, KADDR + 0x1800, { "do_syscall_64", 13 },
			      { "", 0 } };
	CHECK(resolver_add_ksym(&fx->r, &ks) == 0);
}

static void
fixture_close(struct fixture *fx)
{
	resolver_release(&fx->r);
	symbolizer_free(fx->sym);
	stream_writer_release(&fx->w);
	close(fx->fd);
	unlink(fx->path);
}

static void
record(const struct frame *f)
{
	struct fr_location l;
	struct fr_mapping m;
	struct fr_function fn;
	char e[200];

	if (f->type == FR_LOCATION && stream_get_location(f, &l, e, sizeof(e)) == 0 &&
	    l.id < MAXID) {
		locs[l.id].defs++;
		locs[l.id].mapping_id = l.mapping_id;
		locs[l.id].address = l.address;
		locs[l.id].nlines = l.nlines;
		locs[l.id].function_id = l.nlines ? l.lines[0].function_id : 0;
	} else if (f->type == FR_FUNCTION && stream_get_function(f, &fn, e, sizeof(e)) == 0 &&
		   fn.id < MAXID) {
		snprintf(funcs[fn.id], sizeof(funcs[fn.id]), "%.*s", fn.name.len, fn.name.p);
	} else if (f->type == FR_MAPPING && stream_get_mapping(f, &m, e, sizeof(e)) == 0 &&
		   m.id < MAXID) {
		maps[m.id].defs++;
		maps[m.id].flags = m.flags;
		maps[m.id].pid = m.pid;
		maps[m.id].start = m.start;
		maps[m.id].limit = m.limit;
		maps[m.id].offset = m.offset;
		snprintf(maps[m.id].path, sizeof(maps[m.id].path), "%.*s", m.path.len, m.path.p);
	}
}

/* Flushes the writer and rereads the whole file into locs[] and maps[]. */
static void
readback(struct fixture *fx)
{
	struct stream_reader rd;
	struct stream_header h;
	struct frame f;
	int rc;

	memset(locs, 0, sizeof(locs));
	memset(maps, 0, sizeof(maps));
	memset(funcs, 0, sizeof(funcs));
	CHECK(stream_flush(&fx->w) == 0);
	int fd = open(fx->path, O_RDONLY);
	CHECK(fd >= 0 && stream_reader_open(&rd, fd, "t", &h) == 0);
	while ((rc = stream_read(&rd, &f)) > 0)
		record(&f);
	CHECK(rc == 0);
	stream_reader_release(&rd);
	close(fd);
}

static void
sample(unsigned nk, const uint64_t *k, unsigned nu, const uint64_t *u)
{
	memset(&smp, 0, sizeof(smp));
	smp.time = 5000;
	smp.pid = PID;
	smp.tid = PID + 1;
	smp.cpu = 1;
	smp.period = 1000000;
	smp.nkernel = (uint16_t)nk;
	smp.nuser = (uint16_t)nu;
	if (nk)
		memcpy(smp.ips, k, nk * sizeof(*k));
	if (nu)
		memcpy(smp.ips + nk, u, nu * sizeof(*u));
}

static int
resolve(struct fixture *fx)
{
	return fpstack_resolve(&fx->r, &smp, &out);
}

/* The address and mapping written for location locs[i] of the last stack. */
static uint64_t
addr_of(unsigned i)
{
	uint32_t id = out.locs[i];
	return id < MAXID && locs[id].defs == 1 ? locs[id].address : 0;
}

static const char *
path_of(unsigned i)
{
	uint32_t id = out.locs[i];
	if (id >= MAXID || locs[id].defs != 1 || locs[id].mapping_id >= MAXID)
		return "";
	return maps[locs[id].mapping_id].path;
}

static void
test_usable(void)
{
	struct fixture fx;
	uint64_t u[] = { 0x401000, 0x402005, LIB_START + 0x1234 };

	fixture_open(&fx);
	sample(0, NULL, 3, u);
	CHECK(resolve(&fx) == 0);
	CHECK(out.flags == STACK_USABLE);
	CHECK(out.nlocs == 3);
	CHECK(out.time == 5000 && out.pid == PID && out.tid == PID + 1 && out.cpu == 1);
	CHECK(out.period == 1000000);
	readback(&fx);
	/* The leaf is the sampled pc; the callers are return addresses, shown inside the call. */
	CHECK(addr_of(0) == 0x401000);
	CHECK(addr_of(1) == 0x402004);
	CHECK(addr_of(2) == LIB_START + 0x1233);
	CHECK(strcmp(path_of(0), "/nonexistent/exe") == 0);
	CHECK(strcmp(path_of(2), "/nonexistent/lib.so") == 0);
	uint32_t lib_map = locs[out.locs[2]].mapping_id;
	CHECK(lib_map < MAXID && maps[lib_map].defs == 1);
	CHECK(maps[lib_map].pid == PID && maps[lib_map].start == LIB_START);
	CHECK(maps[lib_map].limit == LIB_END && maps[lib_map].offset == 0x2000);
	/* No file, no symbols: the mapping must not claim any. */
	CHECK(maps[lib_map].flags == 0);

	/* A return address one past a sampled leaf is the same location, written once. */
	uint32_t leaf = out.locs[0];
	uint64_t u2[] = { 0x401001, 0x401001 };
	sample(0, NULL, 2, u2);
	CHECK(resolve(&fx) == 0 && out.nlocs == 2);
	CHECK(out.locs[1] == leaf && out.locs[0] != leaf);
	readback(&fx);
	CHECK(locs[leaf].defs == 1);
	CHECK(addr_of(0) == 0x401001);
	fixture_close(&fx);
}

static void
test_empty_and_unmapped(void)
{
	struct fixture fx;

	fixture_open(&fx);
	sample(0, NULL, 0, NULL);
	CHECK(resolve(&fx) == 0);
	CHECK(out.flags == STACK_EMPTY && out.nlocs == 0);
	CHECK(out.time == 5000 && out.pid == PID && out.period == 1000000);

	/* Two valid frames, then one outside every mapping: the rest is not trusted. */
	uint64_t u[] = { 0x401000, 0x402000, 0x900000, 0x401100 };
	sample(0, NULL, 4, u);
	CHECK(resolve(&fx) == 0);
	CHECK(out.flags == STACK_OUT_OF_MAPPING);
	CHECK(out.nlocs == 2);

	/* Mapping ends are exclusive, but a return address at the end was a call inside. */
	uint64_t at_end[] = { 0x401000, EXE_END };
	sample(0, NULL, 2, at_end);
	CHECK(resolve(&fx) == 0 && out.flags == STACK_USABLE && out.nlocs == 2);
	readback(&fx);
	CHECK(addr_of(1) == EXE_END - 1);
	uint64_t past_end[] = { 0x401000, EXE_END + 1 };
	sample(0, NULL, 2, past_end);
	CHECK(resolve(&fx) == 0 && out.flags == STACK_OUT_OF_MAPPING && out.nlocs == 1);
	uint64_t leaf_at_end[] = { EXE_END };
	sample(0, NULL, 1, leaf_at_end);
	CHECK(resolve(&fx) == 0 && out.flags == (STACK_OUT_OF_MAPPING | STACK_EMPTY));

	/* Nothing valid at all: empty as well as out of mapping. */
	uint64_t bad[] = { 0x10, 0x401000 };
	sample(0, NULL, 2, bad);
	CHECK(resolve(&fx) == 0);
	CHECK(out.flags == (STACK_OUT_OF_MAPPING | STACK_EMPTY) && out.nlocs == 0);

	/* A process never seen has no mappings. */
	sample(0, NULL, 2, u);
	smp.pid = 999;
	CHECK(resolve(&fx) == 0);
	CHECK(out.flags == (STACK_OUT_OF_MAPPING | STACK_EMPTY) && out.nlocs == 0);
	fixture_close(&fx);
}

static uint64_t chain[STREAM_MAX_IPS];

static void
test_truncated(void)
{
	struct fixture fx;
	uint64_t k[10];

	for (unsigned i = 0; i < STREAM_MAX_IPS; i++)
		chain[i] = EXE_START + 0x10 * (i + 1);
	for (unsigned i = 0; i < 10; i++)
		k[i] = KADDR + 0x100 * i;
	fixture_open(&fx);
	sample(0, NULL, 126, chain);
	CHECK(resolve(&fx) == 0 && out.flags == STACK_USABLE && out.nlocs == 126);
	/* The kernel stops at the limit, so a chain of exactly 127 may have been cut. */
	sample(0, NULL, FP_MAX_FRAMES, chain);
	CHECK(resolve(&fx) == 0);
	CHECK(out.flags == (STACK_TRUNCATED | STACK_USABLE) && out.nlocs == FP_MAX_FRAMES);
	sample(0, NULL, 200, chain);
	CHECK(resolve(&fx) == 0);
	CHECK(out.flags == (STACK_TRUNCATED | STACK_USABLE) && out.nlocs == FP_MAX_FRAMES);
	readback(&fx);
	CHECK(addr_of(0) == chain[0]);
	CHECK(addr_of(FP_MAX_FRAMES - 1) == chain[FP_MAX_FRAMES - 1] - 1);

	/* Kernel and user frames share the limit; the kernel part comes first. */
	sample(10, k, 200, chain);
	CHECK(resolve(&fx) == 0);
	CHECK((out.flags & STACK_TRUNCATED) && out.nlocs == FP_MAX_FRAMES);
	readback(&fx);
	CHECK(addr_of(0) == KADDR && addr_of(10) == chain[0]);
	CHECK(addr_of(FP_MAX_FRAMES - 1) == chain[FP_MAX_FRAMES - 11] - 1);
	fixture_close(&fx);
}

static void
test_cycle(void)
{
	struct fixture fx;

	fixture_open(&fx);
	/* A frame linking to itself: one return address to the depth limit. */
	chain[0] = 0x401000;
	for (unsigned i = 1; i < STREAM_MAX_IPS; i++)
		chain[i] = 0x402005;
	sample(0, NULL, FP_MAX_FRAMES, chain);
	CHECK(resolve(&fx) == 0);
	CHECK(out.flags & STACK_CYCLE);
	CHECK(out.flags & STACK_TRUNCATED);
	CHECK(!(out.flags & STACK_USABLE));
	CHECK(out.nlocs == FP_MAX_FRAMES);
	readback(&fx);
	CHECK(out.locs[1] == out.locs[FP_MAX_FRAMES - 1] && addr_of(1) == 0x402004);
	CHECK(locs[out.locs[1]].defs == 1);

	/* Two frames linking to each other. */
	for (unsigned i = 1; i < STREAM_MAX_IPS; i++)
		chain[i] = i % 2 ? 0x402005 : 0x403009;
	sample(0, NULL, 300, chain);
	CHECK(resolve(&fx) == 0);
	CHECK((out.flags & STACK_CYCLE) && !(out.flags & STACK_USABLE));

	/* Recursion that ends before the limit is a normal stack. */
	sample(0, NULL, 60, chain);
	CHECK(resolve(&fx) == 0 && out.flags == STACK_USABLE && out.nlocs == 60);
	fixture_close(&fx);
}

static void
test_kernel_first(void)
{
	struct fixture fx;
	uint64_t k[] = { KADDR + 0x1000, KADDR + 0x2000 };
	uint64_t u[] = { 0x401000, 0x402001 };

	fixture_open(&fx);
	sample(2, k, 2, u);
	CHECK(resolve(&fx) == 0);
	CHECK(out.flags == STACK_USABLE && out.nlocs == 4);
	readback(&fx);
	CHECK(addr_of(0) == KADDR + 0x1000 && addr_of(1) == KADDR + 0x2000 - 1);
	CHECK(addr_of(2) == 0x401000 && addr_of(3) == 0x402000);
	uint32_t km = locs[out.locs[0]].mapping_id;
	CHECK(km < MAXID && (maps[km].flags & MAPPING_KERNEL));
	CHECK(locs[out.locs[1]].mapping_id == km);
	CHECK(locs[out.locs[2]].mapping_id != km);
	CHECK(strcmp(path_of(0), "[kernel.kallsyms]") == 0);
	/* Kernel names come from FR_KSYM; an address no symbol covers has none. */
	CHECK(locs[out.locs[0]].nlines == 1);
	CHECK(strcmp(funcs[locs[out.locs[0]].function_id], "do_syscall_64") == 0);
	CHECK(locs[out.locs[1]].nlines == 0);
	CHECK(locs[out.locs[2]].nlines == 0);

	/* A kernel-only stack needs no process. */
	sample(2, k, 0, NULL);
	smp.pid = 0;
	CHECK(resolve(&fx) == 0 && out.flags == STACK_USABLE && out.nlocs == 2);
	/* A user part outside the mappings keeps the kernel part. */
	uint64_t bad[] = { 0x10 };
	sample(2, k, 1, bad);
	CHECK(resolve(&fx) == 0);
	CHECK(out.flags == STACK_OUT_OF_MAPPING && out.nlocs == 2);
	readback(&fx);
	CHECK(maps[km].defs == 1);
	fixture_close(&fx);
}

/* A new mmap over a resolved range gets a new mapping and new locations. */
static void
test_remap(void)
{
	struct fixture fx;
	uint64_t u[] = { LIB_START + 0x100 };

	fixture_open(&fx);
	sample(0, NULL, 1, u);
	CHECK(resolve(&fx) == 0 && out.nlocs == 1);
	uint32_t before = out.locs[0];
	struct fr_mmap other = { .pid = PID, .start = LIB_START, .len = 0x1000,
				 .path = { "/nonexistent/other.so", 21 } };
	CHECK(proc_map(proctab_get(&fx.r.procs, PID), &other) == 0);
	CHECK(resolve(&fx) == 0 && out.nlocs == 1 && out.locs[0] != before);
	readback(&fx);
	CHECK(strcmp(path_of(0), "/nonexistent/other.so") == 0);
	CHECK(locs[before].mapping_id != locs[out.locs[0]].mapping_id);
	fixture_close(&fx);
}

/* Feeds an encoded frame of the given type to resolver_frame. */
static int
feed(struct fixture *fx, uint32_t type, const void *v)
{
	static uint8_t buf[64];
	char e[200];
	struct stream_writer *w = &fx->w;
	CHECK(stream_flush(w) == 0);
	size_t at = (size_t)lseek(fx->fd, 0, SEEK_END);
	int rc = type == FR_ROUND ? stream_put_round(w, v) : stream_put_task(w, type, v);
	CHECK(rc == 0 && stream_flush(w) == 0);
	size_t len = (size_t)lseek(fx->fd, 0, SEEK_END) - at - 8;
	CHECK(len <= sizeof(buf) && pread(fx->fd, buf, len, (off_t)at + 8) == (ssize_t)len);
	struct frame f = { type, (uint32_t)len, buf };
	return resolver_frame(&fx->r, &f, e, sizeof(e));
}

/* 1 when an FR_FORGET written so far lists mapping id. */
static int
forgotten_has(struct fixture *fx, uint32_t id)
{
	struct stream_reader rd;
	struct stream_header h;
	struct frame f;
	int found = 0;
	CHECK(stream_flush(&fx->w) == 0);
	int fd = open(fx->path, O_RDONLY);
	CHECK(fd >= 0 && stream_reader_open(&rd, fd, "t", &h) == 0);
	while (stream_read(&rd, &f) > 0) {
		struct fr_forget g;
		char e[200];
		if (f.type != FR_FORGET || stream_get_forget(&f, &g, e, sizeof(e)) < 0)
			continue;
		for (uint32_t i = 0; i < g.n; i++)
			found |= stream_forget_id(&g, i) == id;
	}
	stream_reader_release(&rd);
	close(fd);
	return found;
}

/* A process that ended is forgotten at the first round at or after its exit, not before
 * (its samples may follow the exit frame until then); a later process with its pid starts
 * empty and gets none of the old one's stacks or locations. */
static void
test_ended(void)
{
	struct fixture fx;
	uint64_t u[] = { 0x401000, 0x402005 };

	fixture_open(&fx);
	sample(0, NULL, 2, u);
	CHECK(resolve(&fx) == 0 && out.flags == STACK_USABLE);
	uint32_t old_leaf = out.locs[0];
	struct fr_task thread = { .time = 6000, .pid = PID, .tid = PID + 1 };
	struct fr_task last = { .time = 6000, .pid = PID, .tid = PID, .flags = EXIT_PROCESS };
	struct fr_round early = { 5999 }, covering = { 6000 };
	CHECK(feed(&fx, FR_EXIT, &thread) == 0 && fx.r.nending == 0);
	CHECK(feed(&fx, FR_EXIT, &last) == 0 && fx.r.nending == 1);
	CHECK(feed(&fx, FR_ROUND, &early) == 0 && proctab_find(&fx.r.procs, PID));
	/* A late sample before the round still resolves against the mappings. */
	CHECK(resolve(&fx) == 0 && out.flags == STACK_USABLE && out.locs[0] == old_leaf);
	CHECK(feed(&fx, FR_ROUND, &covering) == 0 && fx.r.nending == 0);
	CHECK(proctab_find(&fx.r.procs, PID) == NULL);
	/* Its mapping is listed for the later stages, at that round. */
	readback(&fx);
	uint32_t old_map = locs[old_leaf].mapping_id;
	CHECK(old_map && forgotten_has(&fx, old_map));
	/* A new process with the same pid and the same mapping at the same place: new
	 * mapping and location ids, nothing cached from the old one. */
	struct proc *p = proctab_get(&fx.r.procs, PID);
	struct fr_mmap exe = { .pid = PID, .start = EXE_START, .len = EXE_END - EXE_START,
			       .path = { "/nonexistent/exe", 16 } };
	CHECK(p && p->n == 0 && proc_map(p, &exe) == 0);
	CHECK(resolve(&fx) == 0 && out.flags == STACK_USABLE && out.locs[0] != old_leaf);
	readback(&fx);
	CHECK(locs[out.locs[0]].defs == 1 && addr_of(0) == 0x401000);
	CHECK(locs[old_leaf].mapping_id != locs[out.locs[0]].mapping_id);
	/* Samples of a pid the table does not hold leave no entry behind. */
	smp.pid = PID + 7;
	size_t n = fx.r.procs.n;
	CHECK(resolve(&fx) == 0 && (out.flags & STACK_OUT_OF_MAPPING) && fx.r.procs.n == n);
	fixture_close(&fx);
}

/* A mapping replaced by a new mmap is listed once no stack written before can name it:
 * at the first round at or after the newer of the mmap and the latest stack. */
static void
test_replaced(void)
{
	struct fixture fx;
	uint64_t u[] = { LIB_START + 0x10 };

	fixture_open(&fx);
	sample(0, NULL, 1, u);
	CHECK(resolve(&fx) == 0 && out.flags == STACK_USABLE); /* a stack at 5000 */
	readback(&fx);
	uint32_t lib_map = locs[out.locs[0]].mapping_id;
	struct fr_mmap other = { .time = 4000, .pid = PID, .start = LIB_START,
				 .len = LIB_END - LIB_START, .path = { "/nonexistent/new.so", 19 } };
	struct fr_round before = { 4999 }, after = { 5000 };
	CHECK(stream_flush(&fx.w) == 0);
	size_t at = (size_t)lseek(fx.fd, 0, SEEK_END);
	CHECK(stream_put_mmap(&fx.w, &other) == 0 && stream_flush(&fx.w) == 0);
	static uint8_t buf[256];
	size_t len = (size_t)lseek(fx.fd, 0, SEEK_END) - at - 8;
	CHECK(len <= sizeof(buf) && pread(fx.fd, buf, len, (off_t)at + 8) == (ssize_t)len);
	struct frame f = { FR_MMAP, (uint32_t)len, buf };
	char e[200];
	CHECK(resolver_frame(&fx.r, &f, e, sizeof(e)) == 0);
	CHECK(feed(&fx, FR_ROUND, &before) == 0 && !forgotten_has(&fx, lib_map));
	CHECK(feed(&fx, FR_ROUND, &after) == 0 && forgotten_has(&fx, lib_map));
	fixture_close(&fx);
}

static void
map_at(struct proc *p, uint64_t start, uint64_t len, uint64_t pgoff, const char *path)
{
	struct fr_mmap m = { .start = start, .len = len, .pgoff = pgoff,
			     .path = { path, (uint16_t)strlen(path) } };
	CHECK(proc_map(p, &m) == 0);
}

static int
is_map(struct proc *p, size_t i, uint64_t start, uint64_t end, uint64_t pgoff, const char *path)
{
	return i < p->n && p->maps[i].start == start && p->maps[i].end == end &&
	       p->maps[i].pgoff == pgoff && strcmp(p->maps[i].path, path) == 0;
}

static void
test_procmaps(void)
{
	struct proctab t = { 0 };
	struct proc *p = proctab_get(&t, 7);

	map_at(p, 0x1000, 0x4000, 0, "a");
	map_at(p, 0x3000, 0x1000, 0x500, "b");      /* in the middle: a is split */
	CHECK(p->n == 3);
	CHECK(is_map(p, 0, 0x1000, 0x3000, 0, "a"));
	CHECK(is_map(p, 1, 0x3000, 0x4000, 0x500, "b"));
	CHECK(is_map(p, 2, 0x4000, 0x5000, 0x3000, "a"));
	CHECK(proc_find(p, 0x3fff) == &p->maps[1] && proc_find(p, 0x4000) == &p->maps[2]);
	CHECK(proc_find(p, 0xfff) == NULL && proc_find(p, 0x5000) == NULL);

	map_at(p, 0x0, 0x2000, 0, "c");             /* overlaps the head of a */
	CHECK(p->n == 4 && is_map(p, 0, 0, 0x2000, 0, "c"));
	CHECK(is_map(p, 1, 0x2000, 0x3000, 0x1000, "a"));
	map_at(p, 0x4800, 0x1000, 0, "d");          /* overlaps the tail of a */
	CHECK(p->n == 5 && is_map(p, 3, 0x4000, 0x4800, 0x3000, "a"));
	CHECK(is_map(p, 4, 0x4800, 0x5800, 0, "d"));
	map_at(p, 0x1000, 0x4000, 0x9000, "e");     /* covers a, b and a again */
	CHECK(p->n == 3);
	CHECK(is_map(p, 0, 0, 0x1000, 0, "c"));
	CHECK(is_map(p, 1, 0x1000, 0x5000, 0x9000, "e"));
	CHECK(is_map(p, 2, 0x5000, 0x5800, 0x800, "d"));
	map_at(p, 0x1000, 0x4000, 0, "f");          /* exactly the same range */
	CHECK(p->n == 3 && is_map(p, 1, 0x1000, 0x5000, 0, "f"));
	map_at(p, 0x9000, 0, 0, "g");               /* empty: ignored */
	CHECK(p->n == 3 && proc_find(p, 0x9000) == NULL);

	/* The same mapping reported again (collect after reopening its events): it stays, with
	 * its mapping id and locations, and nothing is forgotten; another build id replaces it. */
	struct fr_mmap same = { .start = 0x1000, .len = 0x4000, .pgoff = 0, .build_id_len = 2,
				.build_id = { 0xab, 0xcd }, .path = { "f", 1 } };
	CHECK(proc_map(p, &same) == 0 && p->n == 3);
	p->maps[1].mapping_id = 77;
	uint64_t gen = p->gen;
	size_t gone = t.ngone;
	CHECK(proc_map(p, &same) == 0 && p->n == 3 && p->maps[1].mapping_id == 77);
	CHECK(p->gen == gen && t.ngone == gone);
	same.build_id[1] = 0xce;
	CHECK(proc_map(p, &same) == 0 && p->n == 3 && p->maps[1].mapping_id == 0);
	CHECK(t.ngone == gone + 1 && t.gone[gone] == 77);
	same.build_id_len = 0;	/* without a build id a report always replaces */
	p->maps[1].mapping_id = 78;
	CHECK(proc_map(p, &same) == 0 && p->maps[1].mapping_id == 0 && t.gone[gone + 1] == 78);

	proc_clear(p);
	CHECK(p->n == 0 && proc_find(p, 0x1000) == NULL);
	map_at(p, 0x1000, 0x1000, 0, "h");
	CHECK(p->n == 1 && proc_find(p, 0x1800) == &p->maps[0]);

	/* Processes stay sorted by pid through growth. */
	for (uint32_t pid = 200; pid > 0; pid -= 5)
		CHECK(proctab_get(&t, pid) != NULL);
	int sorted = 1;
	for (size_t i = 1; i < t.n; i++)
		sorted &= t.procs[i - 1].pid < t.procs[i].pid;
	CHECK(sorted && t.n == 41);
	p = proctab_get(&t, 7);
	CHECK(p && p->pid == 7 && p->n == 1 && t.n == 41);
	proctab_release(&t);
}

int
main(void)
{
	test_usable();
	test_empty_and_unmapped();
	test_truncated();
	test_cycle();
	test_kernel_first();
	test_remap();
	test_procmaps();
	test_ended();
	test_replaced();
	printf("fpstack: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
