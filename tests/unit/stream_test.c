/* Unit tests of the stream codec: round trips, the documented example, and refusal of
 * truncated and corrupt input. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stream.h"

#include "check.h"

static const struct stream_header hdr = { 1, 1, -5, 0x1122334455667788ull, 62 };

/* Writes through a pipe-less temp file and returns its bytes. */
static uint8_t *
capture(void (*fill)(struct stream_writer *), size_t *len)
{
	char path[] = "/tmp/rp-stream-test-XXXXXX";
	int fd = mkstemp(path);
	struct stream_writer w;
	unlink(path);
	stream_writer_open(&w, fd, "t", &hdr);
	fill(&w);
	stream_flush(&w);
	stream_writer_release(&w);
	*len = (size_t)lseek(fd, 0, SEEK_END);
	uint8_t *buf = malloc(*len);
	pread(fd, buf, *len, 0);
	close(fd);
	return buf;
}

static int
reader_on(const uint8_t *buf, size_t len, struct stream_reader *r, struct stream_header *h)
{
	int p[2];
	if (pipe(p) < 0)
		abort();
	if (write(p[1], buf, len) != (ssize_t)len)
		abort();
	close(p[1]);
	return stream_reader_open(r, p[0], "t", h);
}

/* What fill wrote, read back: its bytes and a reader on them. */
struct readback {
	uint8_t *bytes;
	size_t len;
	struct stream_reader r;
	struct stream_header h;
	struct frame f;  /* the frame next() read */
	char err[200];   /* for the decoders */
};

static int
readback_open(struct readback *rb, void (*fill)(struct stream_writer *))
{
	rb->bytes = capture(fill, &rb->len);
	return reader_on(rb->bytes, rb->len, &rb->r, &rb->h);
}

/* 1 when a frame was read into rb->f. */
static int
next(struct readback *rb)
{
	return stream_read(&rb->r, &rb->f) == 1;
}

static void
readback_close(struct readback *rb)
{
	stream_reader_release(&rb->r);
	free(rb->bytes);
}

static void
fill_example(struct stream_writer *w)
{
	struct fr_sample s = { .time = 7, .pid = 100, .tid = 101, .cpu = 1, .period = 20408163,
			       .nkernel = 1, .nuser = 2 };
	s.ips[0] = 0xffffffff81000010ull;
	s.ips[1] = 0x555555555131ull;
	s.ips[2] = 0x5555555551a7ull;
	stream_put_sample(w, &s);
	struct fr_end e = { 9, END_DURATION };
	stream_put_end(w, &e);
}

static void
test_example(void)
{
	size_t len;
	uint8_t *b = capture(fill_example, &len);
	CHECK(len == 48 + 8 + 60 + 8 + 12);
	CHECK(memcmp(b, "RPSTREAM\x01\x00\x30\x00\x04\x03\x02\x01", 16) == 0);
	CHECK(memcmp(b + 48, "\x06\0\0\0\x3c\0\0\0", 8) == 0);
	CHECK(b[48 + 8 + 32] == 1 && b[48 + 8 + 34] == 2);
	CHECK(memcmp(b + 48 + 8 + 60, "\x0b\0\0\0\x0c\0\0\0", 8) == 0);

	struct stream_reader r;
	struct stream_header h;
	struct frame f;
	static struct fr_sample s;
	char e[200];
	CHECK(reader_on(b, len, &r, &h) == 0);
	CHECK(h.session_id == hdr.session_id && h.clock_offset_ns == -5 && h.e_machine == 62);
	CHECK(stream_read(&r, &f) == 1 && f.type == FR_SAMPLE);
	CHECK(stream_get_sample(&f, &s, e, sizeof(e)) == 0);
	CHECK(s.nkernel == 1 && s.nuser == 2 && s.ips[2] == 0x5555555551a7ull);
	CHECK(s.period == 20408163 && s.tid == 101);
	CHECK(stream_read(&r, &f) == 1 && f.type == FR_END);
	CHECK(stream_read(&r, &f) == 0);
	stream_reader_release(&r);

	/* Every truncation point is an error, never a crash or a silent end. */
	for (size_t cut = 1; cut < len; cut++) {
		int rc = reader_on(b, cut, &r, &h);
		int frames = 0;
		if (rc == 0)
			while ((rc = stream_read(&r, &f)) > 0)
				frames++;
		if (cut == 48 + 68 || cut == 48)
			CHECK(rc == 0);  /* frame boundary: clean end, caller sees no end frame */
		else
			CHECK(rc == -1 && r.err[0]);
		stream_reader_release(&r);
	}
	free(b);
}

static void
fill_defs(struct stream_writer *w)
{
	struct fr_mmap m = { .time = 1, .pid = 2, .tid = 2, .start = 0x1000, .len = 0x2000,
			     .pgoff = 0x1000, .prot = 5, .build_id_len = 3,
			     .build_id = { 0xab, 0xcd, 0xef }, .path = { "/bin/x", 6 } };
	stream_put_mmap(w, &m);
	struct fr_location l = { .id = 4, .mapping_id = 1, .address = 0x1234, .nlines = 2 };
	l.lines[0] = (struct fr_line){ 7, 10 };
	l.lines[1] = (struct fr_line){ 8, 20 };
	stream_put_location(w, &l);
	struct fr_window_start ws = { 3, 10, 20 };
	stream_put_window_start(w, &ws);
	struct fr_window_end we = { .index = 3, .start = 10, .end = 20, .reason = 2, .nstats = 1 };
	we.stats[0] = (struct fr_stat){ { "samples", 7 }, 42 };
	stream_put_window_end(w, &we);
	struct fr_file fl = { 3, FILE_REQUIRED, { "cpu", 3 }, { "a.pb.gz", 7 }, { "../x", 4 } };
	stream_put_file(w, &fl);
	stream_write(w, 999, "abc", 3);
}

static void
test_roundtrip(void)
{
	struct readback rb;
	char *e = rb.err;
	CHECK(readback_open(&rb, fill_defs) == 0);

	struct fr_mmap m;
	CHECK(next(&rb) && stream_get_mmap(&rb.f, &m, e, sizeof(rb.err)) == 0);
	CHECK(m.len == 0x2000 && m.build_id_len == 3 && m.build_id[2] == 0xef);
	CHECK(str_eq(m.path, "/bin/x"));

	static struct fr_location l;
	CHECK(next(&rb) && stream_get_location(&rb.f, &l, e, sizeof(rb.err)) == 0);
	CHECK(l.nlines == 2 && l.lines[1].function_id == 8 && l.lines[1].line == 20);
	/* A short copy of the same frame is refused. */
	struct frame sf = rb.f;
	sf.len -= 1;
	CHECK(stream_get_location(&sf, &l, e, sizeof(rb.err)) == -1 && strstr(e, "too short"));

	static struct fr_window_end we;
	rb.r.order.rules = ORDER_WINDOW_GAPS; /* the window is number 3 */
	CHECK(next(&rb) && rb.f.type == FR_WINDOW_START);
	CHECK(next(&rb) && stream_get_window_end(&rb.f, &we, e, sizeof(rb.err)) == 0);
	CHECK(we.nstats == 1 && str_eq(we.stats[0].key, "samples") && we.stats[0].value == 42);

	struct fr_file fl;
	CHECK(next(&rb) && stream_get_file(&rb.f, &fl, e, sizeof(rb.err)) == -1);
	CHECK(strstr(e, "plain name") != NULL);

	CHECK(next(&rb) && rb.f.type == 999 && rb.f.len == 3);
	CHECK(stream_check_frame(&rb.f, e, sizeof(rb.err)) == 0);
	CHECK(stream_read(&rb.r, &rb.f) == 0);
	readback_close(&rb);
}

static void
fill_regs(struct stream_writer *w)
{
	static struct fr_sample_regs s;
	static uint8_t stack[300];
	for (unsigned i = 0; i < sizeof(stack); i++)
		stack[i] = (uint8_t)i;
	s = (struct fr_sample_regs){ .time = 5, .pid = 9, .tid = 10, .abi = 2, .period = 77,
				     .nkernel = 1, .nregs = 3, .reg_mask = 0x1c0,
				     .stack_len = sizeof(stack), .stack = stack };
	s.kips[0] = 0xffffffff81000000ull;
	s.regs[0] = 1;
	s.regs[1] = 2;
	s.regs[2] = 3;
	stream_put_sample_regs(w, &s);
	s.nregs = 2; /* disagrees with the mask: refused */
	CHECK(stream_put_sample_regs(w, &s) == -1);
	struct fr_usym u = { .build_id_len = 1, .build_id = { 7 }, .path = { "/lib/x.so", 9 },
			     .start = 0x100, .end = 0x180, .name = { "main", 4 } };
	stream_put_usym(w, &u);
}

static void
test_regs_and_usym(void)
{
	struct readback rb;
	char *e = rb.err;
	static struct fr_sample_regs s;
	struct fr_usym u;

	CHECK(readback_open(&rb, fill_regs) == 0);
	CHECK(next(&rb) && stream_get_sample_regs(&rb.f, &s, e, sizeof(rb.err)) == 0);
	CHECK(s.nkernel == 1 && s.kips[0] == 0xffffffff81000000ull && s.nregs == 3);
	CHECK(s.regs[2] == 3 && s.reg_mask == 0x1c0 && s.stack_len == 300 && s.stack[299] == 43);
	struct frame sf = rb.f;
	sf.len -= 1;
	CHECK(stream_get_sample_regs(&sf, &s, e, sizeof(rb.err)) == -1);
	CHECK(next(&rb) && stream_get_usym(&rb.f, &u, e, sizeof(rb.err)) == 0);
	CHECK(u.end == 0x180 && str_eq(u.name, "main") && str_eq(u.path, "/lib/x.so"));
	CHECK(stream_read(&rb.r, &rb.f) == 0);
	readback_close(&rb);
}

static void
fill_target(struct stream_writer *w)
{
	struct fr_target t = { .pid = 42, .kind = { "launch", 6 },
			       .scope_requested = { "cgroup", 6 },
			       .scope_effective = { "process", 7 },
			       .scope_cgroup = { "/x/y", 4 } };
	stream_put_target(w, &t);
}

/* The scope fields come back, and a frame that ends before them (an older writer) reads
 * as empty strings. */
static void
test_target_scope(void)
{
	struct readback rb;
	char *e = rb.err;
	struct fr_target t;

	CHECK(readback_open(&rb, fill_target) == 0);
	CHECK(next(&rb) && stream_get_target(&rb.f, &t, e, sizeof(rb.err)) == 0);
	CHECK(t.pid == 42 && str_eq(t.scope_requested, "cgroup"));
	CHECK(str_eq(t.scope_effective, "process") && str_eq(t.scope_cgroup, "/x/y"));
	CHECK(t.scope_reason.len == 0);
	struct frame old = rb.f;
	/* the sample type and unit (empty), window_nanos, offcpu_percent, the scope */
	old.len -= (2 + 2) + 8 + 4 + (2 + 6) + (2 + 7) + (2 + 4) + (2 + 0);
	CHECK(stream_get_target(&old, &t, e, sizeof(rb.err)) == 0);
	CHECK(t.pid == 42 && str_eq(t.kind, "launch") && t.scope_requested.len == 0);
	CHECK(t.scope_effective.len == 0 && t.scope_cgroup.len == 0);
	/* Cut inside the scope: corrupt, not silently short. */
	old.len = rb.f.len - 4 - 8 - 4 - 3;
	CHECK(stream_get_target(&old, &t, e, sizeof(rb.err)) == -1);
	readback_close(&rb);
}

static void
fill_target_window(struct stream_writer *w)
{
	struct fr_target t = { .pid = 42, .kind = { "pid", 3 }, .window_nanos = 2000000000 };
	stream_put_target(w, &t);
}

/* The recorded window length comes back; a frame that ends before it (an older writer)
 * reads as 0, not recorded; a frame cut inside it is corrupt. */
static void
test_target_window(void)
{
	struct readback rb;
	char *e = rb.err;
	struct fr_target t;

	CHECK(readback_open(&rb, fill_target_window) == 0);
	CHECK(next(&rb) && stream_get_target(&rb.f, &t, e, sizeof(rb.err)) == 0);
	CHECK(t.pid == 42 && t.window_nanos == 2000000000 && t.offcpu_percent == 100);
	struct frame old = rb.f;
	old.len -= 4 + 8; /* the empty sample type and unit, then the window */
	t.window_nanos = 7;
	CHECK(stream_get_target(&old, &t, e, sizeof(rb.err)) == 0 && t.window_nanos == 0);
	CHECK(t.offcpu_percent == 100);
	old.len = rb.f.len - 4 - 3;
	CHECK(stream_get_target(&old, &t, e, sizeof(rb.err)) == -1);
	readback_close(&rb);
}

static void
fill_target_unit(struct stream_writer *w)
{
	struct fr_target t = { .pid = 42, .kind = { "import", 6 }, .sample_type = { "cycles", 6 },
			       .sample_unit = { "count", 5 } };
	stream_put_target(w, &t);
}

/* What the periods count comes back; a frame that ends before it reads as empty (CPU
 * nanoseconds); one cut inside it is corrupt. */
static void
test_target_unit(void)
{
	struct readback rb;
	char *e = rb.err;
	struct fr_target t;

	CHECK(readback_open(&rb, fill_target_unit) == 0);
	CHECK(next(&rb) && stream_get_target(&rb.f, &t, e, sizeof(rb.err)) == 0);
	CHECK(str_eq(t.sample_type, "cycles") && str_eq(t.sample_unit, "count"));
	struct frame old = rb.f;
	old.len -= (2 + 6) + (2 + 5);
	CHECK(stream_get_target(&old, &t, e, sizeof(rb.err)) == 0);
	CHECK(t.sample_type.len == 0 && t.sample_unit.len == 0 && str_eq(t.kind, "import"));
	old.len = rb.f.len - 3;
	CHECK(stream_get_target(&old, &t, e, sizeof(rb.err)) == -1);
	readback_close(&rb);
}

static void
test_corrupt(void)
{
	size_t len;
	uint8_t *b = capture(fill_example, &len);
	struct stream_reader r;
	struct stream_header h;
	struct frame f;

	uint8_t *c = malloc(len);
	memcpy(c, b, len);
	c[0] = 'X';
	CHECK(reader_on(c, len, &r, &h) == -1 && strstr(r.err, "magic"));
	stream_reader_release(&r);

	memcpy(c, b, len);
	c[48 + 7] = 0x7f; /* payload length far beyond the limit */
	CHECK(reader_on(c, len, &r, &h) == 0);
	CHECK(stream_read(&r, &f) == -1 && strstr(r.err, "limit"));
	stream_reader_release(&r);

	memcpy(c, b, len);
	c[48 + 8 + 32] = 0xff; /* nkernel beyond the frame */
	CHECK(reader_on(c, len, &r, &h) == 0);
	char e[200];
	CHECK(stream_read(&r, &f) == 1 && stream_check_frame(&f, e, sizeof(e)) == -1);
	stream_reader_release(&r);

	CHECK(reader_on(b, 0, &r, &h) == -1 && strstr(r.err, "empty"));
	stream_reader_release(&r);
	free(c);
	free(b);
}

/* A corrupt header's offset with an event time: the sum wraps, never overflows (found by
 * fuzz/stage_firefox, built with UBSan). */
static void
test_unix_ns(void)
{
	CHECK(stream_unix_ns(1000, -1000) == 0);
	CHECK(stream_unix_ns(5, 1700000000000000000) == 1700000000000000005);
	CHECK(stream_unix_ns(8574853690544396525ull, 1796161400861948672) ==
	      (int64_t)(8574853690544396525ull + 1796161400861948672ull));
	CHECK(stream_unix_ns(UINT64_MAX, INT64_MIN) == INT64_MAX);
}

static void
fill_churn(struct stream_writer *w)
{
	struct fr_task t = { .time = 5, .pid = 40, .ppid = 1, .tid = 40, .ptid = 1,
			     .flags = EXIT_PROCESS };
	stream_put_task(w, FR_EXIT, &t);
	stream_put_task(w, FR_FORK, &t); /* a fork carries no flags */
	struct fr_forget g = { 40, 0, 3, NULL };
	uint32_t gone[3] = { 7, 0x01020304, 9 };
	stream_put_forget(w, &g, gone);
	struct fr_bid ids[2] = { { 3, { 0xab, 0xcd, 0xef } }, { 20, { 1 } } };
	ids[1].id[19] = 0x99;
	stream_put_modules(w, 7, ids, 2);
	struct fr_end e = { 9, END_INPUT };
	stream_put_end(w, &e);
}

/* The exit flag, forget and modules: round trips, an exit without the flag (an older
 * writer) and a modules frame cut short. */
static void
test_churn_frames(void)
{
	struct readback rb;
	char *e = rb.err;
	struct fr_task t;
	struct fr_forget g;
	struct fr_modules m;
	struct frame old;

	CHECK(readback_open(&rb, fill_churn) == 0);
	CHECK(next(&rb) && rb.f.type == FR_EXIT && rb.f.len == 28);
	CHECK(stream_get_task(&rb.f, &t, e, sizeof(rb.err)) == 0 && t.flags == EXIT_PROCESS &&
	      t.pid == 40 && t.ptid == 1);
	old = rb.f;
	old.len = 24;
	CHECK(stream_get_task(&old, &t, e, sizeof(rb.err)) == 0 && t.flags == 0 && t.tid == 40);
	CHECK(next(&rb) && rb.f.type == FR_FORK);
	CHECK(stream_get_task(&rb.f, &t, e, sizeof(rb.err)) == 0 && t.flags == 0);
	CHECK(next(&rb) && stream_get_forget(&rb.f, &g, e, sizeof(rb.err)) == 0 &&
	      g.pid == 40 && g.tid == 0 && g.n == 3);
	CHECK(stream_forget_id(&g, 0) == 7 && stream_forget_id(&g, 1) == 0x01020304 &&
	      stream_forget_id(&g, 2) == 9);
	old = rb.f;
	old.len -= 2;
	CHECK(stream_get_forget(&old, &g, e, sizeof(rb.err)) == -1 && strstr(e, "too short"));
	CHECK(next(&rb) && stream_get_modules(&rb.f, &m, e, sizeof(rb.err)) == 0 &&
	      m.index == 7 && m.n == 2);
	struct fr_bid a = stream_module(&m, 0), z = stream_module(&m, 1);
	CHECK(a.len == 3 && a.id[0] == 0xab && a.id[2] == 0xef);
	CHECK(z.len == 20 && z.id[0] == 1 && z.id[19] == 0x99);
	old = rb.f;
	old.len -= 1;
	CHECK(stream_get_modules(&old, &m, e, sizeof(rb.err)) == -1 && strstr(e, "too short"));
	uint8_t bad[4 + 2 + 21] = { 0, 0, 0, 0, 1, 0, 21 };
	old = (struct frame){ FR_MODULES, sizeof(bad), bad };
	CHECK(stream_check_frame(&old, e, sizeof(rb.err)) == -1 && strstr(e, "build id"));
	CHECK(strcmp(stream_frame_name(FR_FORGET), "forget") == 0 &&
	      strcmp(stream_frame_name(FR_MODULES), "modules") == 0);
	readback_close(&rb);
}

/* Held frames go out after those of the hold's end, and the buffer grows past its size. */
static int
first_two(struct stream_writer *w, void *ctx)
{
	(void)ctx;
	struct fr_round r = { 2 };
	return stream_put_round(w, &r);
}

static void
fill_held(struct stream_writer *w)
{
	struct fr_round r = { 1 };
	stream_put_round(w, &r);
	stream_hold(w);
	for (uint64_t t = 3; t < 3 + 100000; t++) { /* 1.6 MB: past the 256 KiB buffer */
		r.time = t;
		stream_put_round(w, &r);
	}
	CHECK(stream_flush(w) == 0);
	CHECK(stream_unhold(w, first_two, NULL) == 0);
	r.time = 3 + 100000;
	stream_put_round(w, &r);
}

/* Walked in the bytes (a pipe would not take them at once): each round frame is 8 header
 * bytes and its u64 time. */
static void
test_hold(void)
{
	size_t len, off = STREAM_HEADER_SIZE;
	uint8_t *b = capture(fill_held, &len);
	uint64_t want = 1, t;
	int order = 1;

	for (; order && off + 16 <= len; off += 16, want++) {
		memcpy(&t, b + off + 8, 8);
		order = b[off] == FR_ROUND && t == want;
	}
	CHECK(order);
	CHECK(off == len);
	CHECK(want == 3 + 100000 + 1);
	free(b);
}

int
main(void)
{
	test_churn_frames();
	test_example();
	test_roundtrip();
	test_regs_and_usym();
	test_target_scope();
	test_target_window();
	test_target_unit();
	test_corrupt();
	test_unix_ns();
	test_hold();
	printf("stream: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
