/* The off-CPU frames (offcpu, offcpu-stack, window-offcpu-stack): each encodes and decodes
 * to the same fields, and the decoders refuse what docs/stream-format.md calls corrupt: an
 * interval that ends before it starts, an unknown phase, more addresses or locations than
 * the limits, a frame cut short; the further intervals a frame may carry are checked the
 * same way, and so are the stack-top words after them.  Bytes appended after what a frame
 * holds are ignored. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stream.h"

#include "check.h"

static struct stream_writer w;
static char path[64];
static int fd;

/* The payload of the last frame written: the writer's buffer holds header and frames. */
static struct frame
last_frame(uint8_t *copy, size_t cap)
{
	struct frame f = { 0 };
	size_t pos = 0;
	CHECK(stream_flush(&w) == 0);
	off_t size = lseek(fd, 0, SEEK_END);
	uint8_t *all = malloc((size_t)size);
	CHECK(all && pread(fd, all, (size_t)size, 0) == size);
	pos = STREAM_HEADER_SIZE;
	while (pos + 8 <= (size_t)size) {
		uint32_t type, len;
		memcpy(&type, all + pos, 4);
		memcpy(&len, all + pos + 4, 4);
		if (pos + 8 + len == (size_t)size && len <= cap) {
			memcpy(copy, all + pos + 8, len);
			f = (struct frame){ type, len, copy };
		}
		pos += 8 + len;
	}
	free(all);
	return f;
}

static void
test_offcpu(void)
{
	static struct fr_offcpu in, out;
	static uint8_t buf[8192];
	char err[200];

	in = (struct fr_offcpu){ .start = 100, .end = 250, .pid = 7, .tid = 8, .cpu = 1,
				 .phase = PHASE_YIELDED, .flags = OFFCPU_CONTINUES, .nkernel = 2,
				 .nuser = 1 };
	in.ips[0] = 0xffffffff81000010;
	in.ips[1] = 0xffffffff81000020;
	in.ips[2] = 0x401000;
	CHECK(stream_put_offcpu(&w, &in) == 0);
	struct frame f = last_frame(buf, sizeof(buf));
	CHECK(f.type == FR_OFFCPU && f.len == 40 + 3 * 8);
	CHECK(stream_get_offcpu(&f, &out, err, sizeof(err)) == 0);
	CHECK(out.start == 100 && out.end == 250 && out.pid == 7 && out.tid == 8 &&
	      out.cpu == 1 && out.phase == PHASE_YIELDED && out.flags == OFFCPU_CONTINUES);
	CHECK(out.nkernel == 2 && out.nuser == 1 && out.ips[1] == in.ips[1] &&
	      out.ips[2] == 0x401000);
	CHECK(stream_check_frame(&f, err, sizeof(err)) == 0);
	/* A cut frame is corrupt. */
	struct frame cut = { FR_OFFCPU, f.len - 1, buf };
	CHECK(stream_get_offcpu(&cut, &out, err, sizeof(err)) < 0 && strstr(err, "short"));
	/* end before start, an unknown phase */
	in.end = 99;
	CHECK(stream_put_offcpu(&w, &in) == 0);
	f = last_frame(buf, sizeof(buf));
	CHECK(stream_get_offcpu(&f, &out, err, sizeof(err)) < 0 && strstr(err, "ends before"));
	in.end = 250;
	in.phase = 4;
	CHECK(stream_put_offcpu(&w, &in) == 0);
	f = last_frame(buf, sizeof(buf));
	CHECK(stream_get_offcpu(&f, &out, err, sizeof(err)) < 0 && strstr(err, "phase"));
	/* too many addresses: refused when writing, and when reading a forged count */
	in.phase = PHASE_BLOCKED;
	in.nkernel = STREAM_MAX_IPS;
	CHECK(stream_put_offcpu(&w, &in) < 0);
	in.nkernel = 2;
	CHECK(stream_put_offcpu(&w, &in) == 0);
	f = last_frame(buf, sizeof(buf));
	uint16_t forged = STREAM_MAX_IPS;
	memcpy(buf + 36, &forged, 2); /* nkernel */
	CHECK(stream_get_offcpu(&f, &out, err, sizeof(err)) < 0);
}

static void
test_offcpu_stack(void)
{
	static struct fr_offcpu_stack in, out;
	static struct fr_window_stack ws, wout;
	static uint8_t buf[8192];
	char err[200];

	in = (struct fr_offcpu_stack){ .start = 5, .end = 9, .pid = 1, .tid = 2, .cpu = 3,
				       .phase = PHASE_BLOCKED, .flags = OFFCPU_CONTINUED,
				       .stack_flags = STACK_USABLE, .nlocs = 3,
				       .locs = { 11, 12, 13 } };
	CHECK(stream_put_offcpu_stack(&w, &in) == 0);
	struct frame f = last_frame(buf, sizeof(buf));
	CHECK(f.type == FR_OFFCPU_STACK);
	CHECK(stream_get_offcpu_stack(&f, &out, err, sizeof(err)) == 0);
	CHECK(out.start == 5 && out.end == 9 && out.pid == 1 && out.tid == 2 && out.cpu == 3 &&
	      out.phase == PHASE_BLOCKED && out.flags == OFFCPU_CONTINUED &&
	      out.stack_flags == STACK_USABLE && out.nlocs == 3 && out.locs[2] == 13);
	in.nlocs = STREAM_MAX_LOCS + 1;
	CHECK(stream_put_offcpu_stack(&w, &in) < 0);

	ws = (struct fr_window_stack){ .index = 4, .pid = 1, .tid = 2, .count = 3, .nanos = 99,
				       .nlocs = 2, .locs = { 7, 8 } };
	CHECK(stream_put_window_offcpu_stack(&w, &ws) == 0);
	f = last_frame(buf, sizeof(buf));
	CHECK(f.type == FR_WINDOW_OFFCPU_STACK);
	CHECK(stream_get_window_offcpu_stack(&f, &wout, err, sizeof(err)) == 0);
	CHECK(wout.index == 4 && wout.count == 3 && wout.nanos == 99 && wout.nlocs == 2 &&
	      wout.locs[1] == 8);
	/* The same bytes are not a window-stack: a reader must not mix the two. */
	CHECK(stream_get_window_stack(&f, &wout, err, sizeof(err)) < 0);
	CHECK(strcmp(stream_frame_name(FR_WINDOW_OFFCPU_STACK), "window-offcpu-stack") == 0);
	CHECK(strcmp(stream_frame_name(FR_OFFCPU), "offcpu") == 0);
}

/* Further intervals (spans) after the known fields: they round-trip, take the frame's stack
 * flags, and are checked like the frame's own interval; bytes after them are ignored. */
static void
test_spans(void)
{
	static struct fr_offcpu in, out;
	static struct fr_offcpu_stack sin, sout;
	static uint8_t buf[8192], spans[4 * OFFCPU_SPAN_BYTES];
	char err[200];

	stream_span_pack(spans, 0, &(struct offcpu_span){ 300, 400, 0 });
	stream_span_pack(spans, 1, &(struct offcpu_span){ 500, 650, OFFCPU_CONTINUES });
	in = (struct fr_offcpu){ .start = 100, .end = 250, .pid = 7, .tid = 8, .cpu = 1,
				 .phase = PHASE_BLOCKED, .flags = OFFCPU_NO_USTACK, .nkernel = 1,
				 .nmore = 2, .more = spans };
	in.ips[0] = 0xffffffff81000010;
	CHECK(stream_put_offcpu(&w, &in) == 0);
	struct frame f = last_frame(buf, sizeof(buf));
	CHECK(f.type == FR_OFFCPU && f.len == 40 + 8 + 4 + 2 * OFFCPU_SPAN_BYTES);
	CHECK(stream_get_offcpu(&f, &out, err, sizeof(err)) == 0 && out.nmore == 2);
	struct offcpu_span s0 = stream_offcpu_span(&out, 0), s2 = stream_offcpu_span(&out, 2);
	CHECK(s0.start == 100 && s0.end == 250 && s0.flags == OFFCPU_NO_USTACK);
	CHECK(s2.start == 500 && s2.end == 650 &&
	      s2.flags == (OFFCPU_CONTINUES | OFFCPU_NO_USTACK));
	CHECK(stream_check_frame(&f, err, sizeof(err)) == 0);
	/* Spans cut short are corrupt. */
	struct frame cut = { FR_OFFCPU, f.len - 1, buf };
	CHECK(stream_get_offcpu(&cut, &out, err, sizeof(err)) < 0 && strstr(err, "short"));
	/* A span that ends before it starts, or with flags other than the piece flags. */
	stream_span_pack(spans, 1, &(struct offcpu_span){ 500, 499, 0 });
	CHECK(stream_put_offcpu(&w, &in) == 0);
	f = last_frame(buf, sizeof(buf));
	CHECK(stream_get_offcpu(&f, &out, err, sizeof(err)) < 0 && strstr(err, "ends before"));
	stream_span_pack(spans, 1, &(struct offcpu_span){ 500, 650, OFFCPU_NO_KSTACK });
	CHECK(stream_put_offcpu(&w, &in) == 0);
	f = last_frame(buf, sizeof(buf));
	CHECK(stream_get_offcpu(&f, &out, err, sizeof(err)) < 0 && strstr(err, "flags"));
	/* Too many spans: refused when writing, and when reading a forged count. */
	stream_span_pack(spans, 1, &(struct offcpu_span){ 500, 650, 0 });
	in.nmore = STREAM_MAX_SPANS + 1;
	CHECK(stream_put_offcpu(&w, &in) < 0);
	in.nmore = 2;
	CHECK(stream_put_offcpu(&w, &in) == 0);
	f = last_frame(buf, sizeof(buf));
	uint32_t forged = STREAM_MAX_SPANS + 1;
	memcpy(buf + 48, &forged, 4);
	CHECK(stream_get_offcpu(&f, &out, err, sizeof(err)) < 0 && strstr(err, "too many"));

	/* offcpu-stack carries them the same way. */
	sin = (struct fr_offcpu_stack){ .start = 5, .end = 9, .pid = 1, .tid = 2, .cpu = 3,
					.phase = PHASE_YIELDED, .stack_flags = STACK_USABLE,
					.nlocs = 1, .locs = { 11 }, .nmore = 2, .more = spans };
	CHECK(stream_put_offcpu_stack(&w, &sin) == 0);
	f = last_frame(buf, sizeof(buf));
	CHECK(stream_get_offcpu_stack(&f, &sout, err, sizeof(err)) == 0 && sout.nmore == 2);
	struct offcpu_span t1 = stream_offcpu_stack_span(&sout, 1);
	CHECK(t1.start == 300 && t1.end == 400 && t1.flags == 0);
	CHECK(stream_span_unpack(sout.more, 1).end == 650);
}

/* Stack-top words: per interval, after the spans (whose count is then always written);
 * they round-trip, a count of 0 or above STREAM_MAX_TOP or words cut short are corrupt, and
 * bytes after them are ignored. */
static void
test_top(void)
{
	static struct fr_offcpu in, out;
	static uint8_t buf[8192], spans[2 * OFFCPU_SPAN_BYTES], top[3 * 2 * 8];
	char err[200];

	for (int i = 0; i < 6; i++)
		for (int b = 0; b < 8; b++)
			top[i * 8 + b] = (uint8_t)(b == 0 ? 0x10 * (i + 1) : b == 7 ? 0x7f : 0);
	stream_span_pack(spans, 0, &(struct offcpu_span){ 300, 400, 0 });
	stream_span_pack(spans, 1, &(struct offcpu_span){ 500, 650, 0 });
	in = (struct fr_offcpu){ .start = 100, .end = 250, .pid = 7, .tid = 8, .cpu = 1,
				 .phase = PHASE_BLOCKED, .nuser = 1, .nmore = 2, .more = spans,
				 .ntop = 2, .top = top };
	in.ips[0] = 0x401000;
	CHECK(stream_put_offcpu(&w, &in) == 0);
	struct frame f = last_frame(buf, sizeof(buf));
	CHECK(f.len == 40 + 8 + 4 + 2 * OFFCPU_SPAN_BYTES + 4 + 3 * 2 * 8);
	CHECK(stream_get_offcpu(&f, &out, err, sizeof(err)) == 0 && out.nmore == 2 &&
	      out.ntop == 2);
	CHECK(stream_offcpu_top(&out, 0, 0) == 0x7f00000000000010 &&
	      stream_offcpu_top(&out, 1, 1) == 0x7f00000000000040 &&
	      stream_offcpu_top(&out, 2, 1) == 0x7f00000000000060);
	CHECK(stream_check_frame(&f, err, sizeof(err)) == 0);
	struct frame longer = { FR_OFFCPU, f.len + 4, buf };
	CHECK(stream_get_offcpu(&longer, &out, err, sizeof(err)) == 0 && out.ntop == 2);
	struct frame cut = { FR_OFFCPU, f.len - 8, buf };
	CHECK(stream_get_offcpu(&cut, &out, err, sizeof(err)) < 0 && strstr(err, "short"));
	uint32_t forged = 0;
	memcpy(buf + 40 + 8 + 4 + 2 * OFFCPU_SPAN_BYTES, &forged, 4);
	CHECK(stream_get_offcpu(&f, &out, err, sizeof(err)) < 0 && strstr(err, "stack words"));
	forged = STREAM_MAX_TOP + 1;
	memcpy(buf + 40 + 8 + 4 + 2 * OFFCPU_SPAN_BYTES, &forged, 4);
	CHECK(stream_get_offcpu(&f, &out, err, sizeof(err)) < 0 && strstr(err, "stack words"));
	/* One interval: the span count 0 is written so that the words can follow. */
	in.nmore = 0;
	in.ntop = 1;
	CHECK(stream_put_offcpu(&w, &in) == 0);
	f = last_frame(buf, sizeof(buf));
	CHECK(f.len == 40 + 8 + 4 + 4 + 8);
	CHECK(stream_get_offcpu(&f, &out, err, sizeof(err)) == 0 && out.nmore == 0 &&
	      out.ntop == 1 && stream_offcpu_top(&out, 0, 0) == 0x7f00000000000010);
	/* Without words, the frame is as before. */
	in.ntop = 0;
	CHECK(stream_put_offcpu(&w, &in) == 0);
	f = last_frame(buf, sizeof(buf));
	CHECK(f.len == 40 + 8 && stream_get_offcpu(&f, &out, err, sizeof(err)) == 0 &&
	      out.ntop == 0);
	in.ntop = STREAM_MAX_TOP + 1;
	CHECK(stream_put_offcpu(&w, &in) < 0);

	/* A stack copy after the words: one interval only, 1 to STREAM_MAX_OFFCPU_STACK bytes. */
	static uint8_t copy[64];
	for (size_t i = 0; i < sizeof(copy); i++)
		copy[i] = (uint8_t)i;
	in.ntop = 1;
	in.sp = 0x7ffc0000;
	in.bp = 0;
	in.nstack = sizeof(copy);
	in.stack = copy;
	CHECK(stream_put_offcpu(&w, &in) == 0);
	f = last_frame(buf, sizeof(buf));
	CHECK(f.len == 40 + 8 + 4 + 4 + 8 + 20 + sizeof(copy));
	CHECK(stream_get_offcpu(&f, &out, err, sizeof(err)) == 0 && out.nstack == sizeof(copy) &&
	      out.sp == 0x7ffc0000 && out.bp == 0 && out.stack[63] == 63);
	CHECK(stream_check_frame(&f, err, sizeof(err)) == 0);
	forged = STREAM_MAX_OFFCPU_STACK + 1;
	memcpy(buf + 40 + 8 + 4 + 4 + 8 + 16, &forged, 4);
	CHECK(stream_get_offcpu(&f, &out, err, sizeof(err)) < 0 && strstr(err, "stack copy"));
	cut = (struct frame){ FR_OFFCPU, f.len - 1, buf };
	memcpy(buf + 40 + 8 + 4 + 4 + 8 + 16, &in.nstack, 4);
	CHECK(stream_get_offcpu(&cut, &out, err, sizeof(err)) < 0 && strstr(err, "short"));
	/* Refused when writing: with further intervals, without words, too large. */
	in.nmore = 1;
	in.more = spans;
	CHECK(stream_put_offcpu(&w, &in) < 0);
	in.nmore = 0;
	in.ntop = 0;
	CHECK(stream_put_offcpu(&w, &in) < 0);
	in.ntop = 1;
	in.nstack = STREAM_MAX_OFFCPU_STACK + 1;
	CHECK(stream_put_offcpu(&w, &in) < 0);
}

/* The target's off-CPU probability: round-trips, 0 is written as 100 (all), absent reads
 * as 100, and a value outside 1..100 is corrupt. */
static void
test_target_percent(void)
{
	static struct fr_target in, out;
	static uint8_t buf[8192];
	char err[200];

	in = (struct fr_target){ .pid = 5, .kind = { "pid", 3 }, .offcpu_percent = 25 };
	CHECK(stream_put_target(&w, &in) == 0);
	struct frame f = last_frame(buf, sizeof(buf));
	CHECK(stream_get_target(&f, &out, err, sizeof(err)) == 0 && out.offcpu_percent == 25);
	/* The percentage is followed by the window length (8 bytes) and the sample type and
	 * unit (two empty strings here, 2 bytes each). */
	struct frame older = { FR_TARGET, f.len - 4 - 8 - 4, buf };
	CHECK(stream_get_target(&older, &out, err, sizeof(err)) == 0 && out.offcpu_percent == 100);
	uint32_t forged = 101;
	memcpy(buf + f.len - 4 - 8 - 4, &forged, 4);
	CHECK(stream_get_target(&f, &out, err, sizeof(err)) < 0 && strstr(err, "probability"));
	in.offcpu_percent = 0;
	CHECK(stream_put_target(&w, &in) == 0);
	f = last_frame(buf, sizeof(buf));
	CHECK(stream_get_target(&f, &out, err, sizeof(err)) == 0 && out.offcpu_percent == 100);
}

int
main(void)
{
	static const struct stream_header h = { 1, 1, 0, 42, 62 };
	snprintf(path, sizeof(path), "/tmp/offcpu_frames_test.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0 || stream_writer_open(&w, fd, "t", &h) < 0)
		abort();
	test_offcpu();
	test_offcpu_stack();
	test_spans();
	test_top();
	test_target_percent();
	stream_writer_release(&w);
	close(fd);
	unlink(path);
	printf("offcpu_frames: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
