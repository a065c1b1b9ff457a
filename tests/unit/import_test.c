/* import: a hand-built pipe capture (one attr, one mmap, one sample with a callchain, in
 * both byte orders) gives the frames collect would write; the flag word's bit order; a
 * sample's addresses (leaf, cpumode, LBR); PERF_SAMPLE_READ weights; the event choice;
 * padded build ids. */
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../import/import.h"

#include "check.h"

static uint8_t cap[4096];
static size_t len;
static int swap;

static void
put(uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		cap[len + i] = (uint8_t)(v >> (8 * (swap ? n - 1 - i : i)));
	len += (size_t)n;
}

static void
build(void)
{
	len = 0;
	memcpy(cap, "PERFILE2", 8);
	if (swap)
		for (int i = 0; i < 4; i++) {
			uint8_t t = cap[i];
			cap[i] = cap[7 - i];
			cap[7 - i] = t;
		}
	len = 8;
	put(16, 8);
	/* HEADER_ATTR: 64-byte attr, cpu-clock, freq 99, IP|TID|TIME|CPU|PERIOD|CALLCHAIN. */
	put(64, 4), put(0, 2), put(8 + 64, 2);
	put(1, 4), put(64, 4), put(0, 8), put(99, 8), put(0x1a7, 8), put(0, 8);
	put(swap ? 1ull << (63 - 10) : 1ull << 10, 8);
	put(0, 8), put(0, 8);
	/* MMAP pid 7 [0x1000, +0x1000) "/bin/x". */
	put(1, 4), put(2, 2), put(8 + 32 + 8, 2);
	put(7, 4), put(7, 4), put(0x1000, 8), put(0x1000, 8), put(0, 8);
	memcpy(cap + len, "/bin/x\0\0", 8), len += 8;
	/* SAMPLE: user chain [USER, 0x1010, 0x1020]. */
	put(9, 4), put(2, 2), put(8 + 8 + 8 + 8 + 8 + 8 + 8 + 24, 2);
	put(0x1010, 8), put(7, 4), put(8, 4), put(5000, 8), put(1, 4), put(0, 4), put(10101010, 8);
	put(3, 8), put((uint64_t)-512, 8), put(0x1010, 8), put(0x1020, 8);
}

static void
run(void)
{
	static struct imp m;
	int p[2];
	char out[8192];
	build();
	if (pipe(p) < 0)
		exit(2);
	imp_init(&m, p[1]);
	src_open_mem(&m.src, cap, len);
	int rc = perfdata_run(&m);
	if (rc < 0)
		printf("error: %s\n", m.err);
	CHECK(rc == 0);
	imp_release(&m);
	close(p[1]);
	ssize_t n = read(p[0], out, sizeof(out));
	close(p[0]);
	CHECK(n > 48);
	struct stream_reader r;
	struct stream_header h;
	struct frame f;
	char e[200];
	int got_sample = 0, got_mmap = 0, got_end = 0;
	int q[2];
	if (pipe(q) < 0 || write(q[1], out, (size_t)n) != n)
		exit(2);
	close(q[1]);
	CHECK(stream_reader_open(&r, q[0], "t", &h) == 0);
	while (stream_read(&r, &f) > 0) {
		if (f.type == FR_SAMPLE) {
			static struct fr_sample s;
			CHECK(stream_get_sample(&f, &s, e, sizeof(e)) == 0);
			CHECK(s.pid == 7 && s.tid == 8 && s.time == 5000 && s.period == 10101010);
			CHECK(s.nkernel == 0 && s.nuser == 2 && s.ips[1] == 0x1020);
			got_sample = 1;
		} else if (f.type == FR_MMAP) {
			struct fr_mmap mm;
			CHECK(stream_get_mmap(&f, &mm, e, sizeof(e)) == 0);
			CHECK(mm.start == 0x1000 && str_eq(mm.path, "/bin/x"));
			got_mmap = 1;
		} else if (f.type == FR_TARGET) {
			struct fr_target t;
			CHECK(stream_get_target(&f, &t, e, sizeof(e)) == 0);
			CHECK(t.pid == 7 && t.cpu_frequency == 99 && str_eq(t.kind, "import"));
		}
		got_end |= f.type == FR_END;
	}
	CHECK(got_sample && got_mmap && got_end);
	stream_reader_release(&r);
	close(q[0]);
}

static uint8_t chainbuf[256];

static const uint8_t *
le64s(const uint64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (int b = 0; b < 8; b++)
			chainbuf[8 * i + (size_t)b] = (uint8_t)(v[i] >> (8 * b));
	return chainbuf;
}

/* The leaf is the sample's IP in the space of its address; the LBR gives the user frames. */
static void
test_stack(void)
{
	static struct imp m;
	static struct fr_sample s;
	struct attr a = { .sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN };
	const uint64_t K = 0xffffffff81000010ull, U1 = 0x401000, U2 = 0x402000, IP = 0x401004;
	uint64_t chain[] = { (uint64_t)PERF_CONTEXT_KERNEL, K, (uint64_t)PERF_CONTEXT_USER, U1, U2 };
	struct body b = { .ip = IP, .has_ip = 1, .nr = 5, .chain = le64s(chain, 5) };
	imp_init(&m, -1);
	m.kernel_start = 1ull << 63;
	/* a user IP under a kernel cpumode: no kernel frame above a user leaf */
	stack_build(&m, &a, &b, PERF_RECORD_MISC_KERNEL, &s);
	CHECK(s.nkernel == 0 && s.nuser == 2 && s.ips[0] == IP && s.ips[1] == U2);
	/* a kernel IP under a user cpumode: a kernel leaf, the user context kept */
	b.ip = K + 4;
	stack_build(&m, &a, &b, PERF_RECORD_MISC_USER, &s);
	CHECK(s.nkernel == 1 && s.ips[0] == K + 4 && s.nuser == 2 && s.ips[1] == U1);
	/* LBR: the leaf, then each call site plus one (unwind looks up the byte before) */
	uint64_t br[] = { 0x403010, IP - 4, 0, 0x404020, 0x403000, 0 };
	a.sample_type |= PERF_SAMPLE_BRANCH_STACK;
	a.branch_sample_type = PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_CALL_STACK;
	b.ip = IP;
	b.nbr = 2;
	uint8_t brb[48];
	memcpy(brb, le64s(br, 6), sizeof(brb));
	b.br = brb;
	b.chain = le64s(chain, 5);
	stack_build(&m, &a, &b, PERF_RECORD_MISC_USER, &s);
	CHECK(s.nkernel == 0 && s.nuser == 3 && s.ips[0] == IP && s.ips[1] == 0x403011 &&
	      s.ips[2] == 0x404021);
	imp_release(&m);
}

/* READ values weigh their growth, per id (and per thread for an inherited counter). */
static void
test_readval(void)
{
	static struct imp m;
	struct attr a = { 0 }, inh = { .flags = 1ull << 1 };
	uint64_t d;
	imp_init(&m, -1);
	CHECK(readval_delta(&m, &a, 7, 1, 1000, &d) == 0 && d == 1000);
	CHECK(readval_delta(&m, &a, 7, 2, 3500, &d) == 0 && d == 2500);
	CHECK(readval_delta(&m, &a, 8, 1, 10, &d) == 0 && d == 10);
	CHECK(readval_delta(&m, &inh, 9, 1, 100, &d) == 0 && d == 100);
	CHECK(readval_delta(&m, &inh, 9, 2, 40, &d) == 0 && d == 40);
	CHECK(readval_delta(&m, &inh, 9, 1, 150, &d) == 0 && d == 50);
	for (uint64_t id = 100; id < 1100; id++) /* growth keeps every value */
		CHECK(readval_delta(&m, &a, id, 0, id, &d) == 0 && d == id);
	CHECK(readval_delta(&m, &a, 7, 0, 3600, &d) == 0 && d == 100);
	imp_release(&m);
}

static struct imp *
attrs_of(const char *const *names, const uint64_t *seen, size_t n)
{
	static struct imp m;
	imp_init(&m, -1);
	for (size_t i = 0; i < n; i++) {
		struct attr *a = &m.attrs[m.nattrs++];
		a->type = !strcmp(names[i], "page-faults") || !strcmp(names[i], "cpu-clock");
		a->config = !strcmp(names[i], "page-faults") ? 2 : 0;
		snprintf(a->name, sizeof(a->name), "%s", names[i]);
		a->seen = seen[i];
	}
	return &m;
}

/* A hybrid PMU pair is one event; the default is an event with samples. */
static void
test_events(void)
{
	static const char *const hy[] = { "cpu_atom/cycles/", "cpu_core/cycles/", "cpu_core/instructions/" };
	static const uint64_t hs[] = { 0, 9, 4 };
	struct imp *m = attrs_of(hy, hs, 3);
	CHECK(events_choose(m) == 0 && m->chosen == 0);
	CHECK(m->attrs[0].selected && m->attrs[1].selected && !m->attrs[2].selected);
	CHECK(!strcmp(m->attrs[1].base, "cycles") && !strcmp(m->attrs[2].base, "instructions"));
	imp_release(m);
	static const char *const two[] = { "cpu-clock", "page-faults" };
	static const uint64_t ts[] = { 0, 5 };
	m = attrs_of(two, ts, 2);
	CHECK(events_choose(m) == 0 && m->chosen == 1 && !m->attrs[0].selected);
	const char *type, *unit;
	events_unit(m, &type, &unit);
	CHECK(!strcmp(type, "page-faults") && !strcmp(unit, "count"));
	imp_release(m);
	m = attrs_of(hy, hs, 3);
	m->want_event = "cpu_core/cycles/";
	CHECK(events_choose(m) == 0 && m->chosen == 1 && !m->attrs[0].selected);
	imp_release(m);
}

/* Without EVENT_DESC, an extended hardware type is named by its PMU from PMU_MAPPINGS. */
static void
test_names(void)
{
	static struct imp m;
	char buf[64];
	imp_init(&m, -1);
	m.pmus[m.npmus++] = (struct pmu){ 4, "cpu_core" };
	struct attr a = { .type = 0, .config = 4ull << 32 | 1 };
	CHECK(!strcmp(attr_default_name(&m, &a, buf, sizeof(buf)), "cpu_core/instructions/"));
	a.config = 8ull << 32;
	CHECK(!strcmp(attr_default_name(&m, &a, buf, sizeof(buf)), "pmu8/cycles/"));
	a = (struct attr){ .type = 1, .config = 1 };
	CHECK(!strcmp(attr_default_name(&m, &a, buf, sizeof(buf)), "task-clock"));
	imp_release(&m);
}

/* A BUILD_ID entry without the size flag: a 16-byte id padded with zeros is 16 bytes; one
 * of zeros is none. */
static void
test_buildid(void)
{
	static struct imp m;
	uint8_t r[64] = { 0 };
	imp_init(&m, -1);
	r[6] = sizeof(r);
	memset(r + 12, 0xab, 16);
	memcpy(r + 36, "/x", 3);
	CHECK(features_add_buildid(&m, r, sizeof(r)) == 0);
	const struct buildid *b = features_find_buildid(&m, "/x", 2);
	CHECK(b && b->len == 16);
	r[12 + 16] = 1;
	memcpy(r + 36, "/y", 3);
	CHECK(features_add_buildid(&m, r, sizeof(r)) == 0);
	b = features_find_buildid(&m, "/y", 2);
	CHECK(b && b->len == 20);
	/* zeros are no build id: files simpleperf could not read are not one module */
	memset(r + 12, 0, 20);
	memcpy(r + 36, "/z", 3);
	CHECK(features_add_buildid(&m, r, sizeof(r)) == 0);
	CHECK(features_find_buildid(&m, "/z", 2) == NULL);
	imp_release(&m);
}

int
main(void)
{
	test_stack();
	test_readval();
	test_events();
	test_buildid();
	test_names();
	uint8_t be[8] = { 0x80, 0, 0, 0, 0, 0, 0, 0x01 };
	CHECK(bo_flags((struct bo){ 1 }, be) == 0x8000000000000001ull);
	swap = 0;
	run();
	swap = 1;
	run();
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
