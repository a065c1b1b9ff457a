/* import: a hand-built pipe capture (one attr, one mmap, one sample with a callchain, in
 * both byte orders) gives the frames collect would write; the flag word's bit order. */
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

int
main(void)
{
	uint8_t be[8] = { 0x80, 0, 0, 0, 0, 0, 0, 0x01 };
	CHECK(bo_flags((struct bo){ 1 }, be) == 0x8000000000000001ull);
	swap = 0;
	run();
	swap = 1;
	run();
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
