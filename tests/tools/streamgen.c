/*
 * streamgen: writes a small synthetic rustprofile stream on stdout for emit-pprof tests.
 *
 * usage: streamgen good | empty | missing-loc | missing-func | redefine | big N
 *        streamgen dump < stream
 *
 *   good          target, kernel/libc/exe mappings, functions with an inline pair, thread
 *                 names, and two windows (3 stacks, then 1)
 *   empty         the definitions and one window without stacks
 *   missing-loc   a window stack uses location 99, never defined
 *   missing-func  location 7 uses function 99, never defined
 *   redefine      location 1 is defined twice
 *   big N         N distinct stacks in each of two windows (speed checks)
 *   distinct N    one window of N stacks with N distinct leaf functions under 500 "mid_"
 *                 functions (flame graph caps)
 *   odd           one window whose names need escaping ("a;b", "<T&>", a byte that is not
 *                 UTF-8) and an unsymbolized libc frame (derived emitters)
 *   pack          reads a text description of a stream on stdin (see pack() below) and
 *                 writes it: crafted streams for the order and file-frame checks
 *   dump          reads a stream on stdin and prints one line per frame: its type name,
 *                 for a file frame "index flags kind name temp", for an offcpu or
 *                 offcpu-stack frame the number of intervals it carries
 *
 * Built by tests/emit_pprof.bats against .output/lib/librp.a; not part of the product.
 */
#include <err.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream.h"

#define S(lit) ((struct str){ (lit), sizeof(lit) - 1 })
#define SESSION 0x00c0ffee12345678ull
#define OFFSET 1700000000000000000ll    /* event time 0 = 2023-11-14 22:13:20 UTC */
#define SEC 1000000000ull

static struct stream_writer w;

static void
check(int rc)
{
	if (rc < 0)
		errx(1, "stdout: %s", w.err);
}

static void
mapping(uint32_t id, uint32_t flags, uint64_t start, const char *path, const char *bid)
{
	struct fr_mapping m = { .id = id, .pid = 100, .start = start, .limit = start + 0x100000,
				.offset = 0x1000, .flags = flags };

	m.path = (struct str){ path, (uint16_t)strlen(path) };
	for (; bid && *bid && m.build_id_len < STREAM_BUILD_ID_MAX; bid++)
		m.build_id[m.build_id_len++] = (uint8_t)*bid;
	check(stream_put_mapping(&w, &m));
}

static void
function(uint32_t id, const char *name, const char *file, uint32_t line)
{
	struct fr_function f = { .id = id, .start_line = line };

	f.name = (struct str){ name, (uint16_t)strlen(name) };
	f.filename = (struct str){ file, (uint16_t)strlen(file) };
	check(stream_put_function(&w, &f));
}

/* Up to two lines: fn/line, then optionally an outer fn2/line2 the first is inlined into. */
static void
location(uint32_t id, uint32_t map, uint64_t addr, uint32_t fn, uint32_t line, uint32_t fn2,
	 uint32_t line2)
{
	struct fr_location l = { .id = id, .mapping_id = map, .address = addr, .nlines = 1 };

	l.lines[0] = (struct fr_line){ fn, line };
	if (fn2)
		l.lines[l.nlines++] = (struct fr_line){ fn2, line2 };
	check(stream_put_location(&w, &l));
}

static void
comm(uint32_t tid, const char *name)
{
	struct fr_comm c = { .pid = 100, .tid = tid };

	c.comm = (struct str){ name, (uint16_t)strlen(name) };
	check(stream_put_comm(&w, &c));
}

static void
definitions(void)
{
	struct fr_target t = { .pid = 100, .cpu_frequency = 100, .kind = S("pid"),
			       .exe = S("/usr/bin/app"), .comm = S("app"), .profiles = S("cpu") };

	check(stream_put_target(&w, &t));
	mapping(1, MAPPING_KERNEL | MAPPING_HAS_FUNCTIONS, 0xffffffff81000000ull,
		"[kernel.kallsyms]", NULL);
	mapping(2, MAPPING_HAS_FUNCTIONS, 0x7f0000000000ull, "/lib/libc.so.6", "\x12\xab\xcd\xef");
	mapping(3, MAPPING_HAS_FUNCTIONS | MAPPING_HAS_FILENAMES | MAPPING_HAS_LINES |
		MAPPING_HAS_INLINES, 0x400000, "/usr/bin/app", "\x4f\x1c\x3b");
	function(1, "main", "app.c", 10);
	function(2, "work", "app.c", 20);
	function(3, "inlined_helper", "app.h", 5);
	function(4, "memcpy", "", 0);
	function(5, "schedule", "", 0);
	function(6, "unused", "app.c", 90);
	location(1, 2, 0x7f0000001000ull, 4, 0, 0, 0);
	location(2, 3, 0x401100, 3, 7, 2, 25);
	location(3, 3, 0x401050, 1, 12, 0, 0);
	location(4, 1, 0xffffffff81000100ull, 5, 0, 0, 0);
	location(5, 3, 0x401200, 6, 91, 0, 0);
	comm(100, "app");
	comm(101, "worker");
	comm(101, "worker-2");
}

static void
window_start(uint32_t index)
{
	struct fr_window_start s = { index, 1000 + index * SEC, 1000 + (index + 1) * SEC };

	check(stream_put_window_start(&w, &s));
}

static void
window_end(uint32_t index)
{
	struct fr_window_end e = { .index = index, .start = 1000 + index * SEC,
				   .end = 1000 + (index + 1) * SEC, .reason = WINDOW_COMPLETE };

	check(stream_put_window_end(&w, &e));
}

/* A stack of up to three locations, leaf first (0 ends the list). */
static void
stack(uint32_t index, uint32_t tid, uint64_t count, uint32_t a, uint32_t b, uint32_t c)
{
	struct fr_window_stack s = { .index = index, .pid = 100, .tid = tid, .count = count,
				     .nanos = count * 10000000 };
	uint32_t l[3] = { a, b, c };

	for (int i = 0; i < 3 && l[i]; i++)
		s.locs[s.nlocs++] = l[i];
	check(stream_put_window_stack(&w, &s));
}

/* n stacks per window over n distinct leaf locations, defined up front. */
static void
big(uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		location(1000 + i, 3, 0x410000 + i, 2, i, 1, 12);
	for (uint32_t win = 0; win < 2; win++) {
		window_start(win);
		for (uint32_t i = 0; i < n; i++)
			stack(win, 100 + i % 7, 1 + i % 3, 1000 + i, 2, 3);
		window_end(win);
	}
}

/* n stacks: leaf_i <- mid_(i % 500) <- main, over distinct functions and locations. */
static void
distinct(uint32_t n)
{
	char name[32];

	for (uint32_t i = 0; i < 500; i++) {
		snprintf(name, sizeof(name), "mid_%03u", i);
		function(10000 + i, name, "mid.c", i);
		location(10000 + i, 3, 0x480000 + i, 10000 + i, 1, 0, 0);
	}
	for (uint32_t i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "leaf_%07u", i);
		function(20000 + i, name, "leaf.c", 1);
		location(20000 + i, 3, 0x500000 + i, 20000 + i, 2, 0, 0);
	}
	window_start(0);
	for (uint32_t i = 0; i < n; i++)
		stack(0, 100 + i % 7, 1, 20000 + i, 10000 + i % 500, 3);
	window_end(0);
}

/* Names with ';', XML markup and a stray byte; location 41 has no lines (unsymbolized). */
static void
odd(void)
{
	struct fr_location l = { .id = 41, .mapping_id = 2, .address = 0x7f0000009000ull };

	function(40, "ns::f<A&B>;g", "odd.cc", 1);
	function(41, "bad\xff" "byte", "odd.cc", 2);
	location(40, 3, 0x401400, 40, 3, 0, 0);
	location(42, 3, 0x401500, 41, 3, 0, 0);
	check(stream_put_location(&w, &l));
	window_start(0);
	stack(0, 100, 2, 40, 3, 0);
	stack(0, 100, 1, 41, 42, 3);
	stack(0, 100, 4, 4, 40, 3);
	window_end(0);
}

static int
dump(void)
{
	struct stream_reader r;
	struct stream_header h;
	struct frame f;
	struct fr_file ff;
	static struct fr_offcpu oc;
	static struct fr_offcpu_stack os;
	char why[200];
	int rc;

	if (stream_reader_open(&r, 0, "stdin", &h) < 0)
		errx(1, "stdin: %s", r.err);
	while ((rc = stream_read(&r, &f)) > 0) {
		printf("%s", stream_frame_name(f.type));
		if (f.type == FR_FILE) {
			if (stream_get_file(&f, &ff, why, sizeof(why)) < 0)
				errx(1, "stdin: %s", why);
			printf(" %u %u %.*s %.*s %.*s", ff.index, ff.flags, ff.kind.len, ff.kind.p,
			       ff.name.len, ff.name.p, ff.temp.len, ff.temp.p);
		} else if (f.type == FR_OFFCPU) {
			if (stream_get_offcpu(&f, &oc, why, sizeof(why)) < 0)
				errx(1, "stdin: %s", why);
			printf(" %u", oc.nmore + 1);
		} else if (f.type == FR_OFFCPU_STACK) {
			if (stream_get_offcpu_stack(&f, &os, why, sizeof(why)) < 0)
				errx(1, "stdin: %s", why);
			printf(" %u", os.nmore + 1);
		}
		printf("\n");
	}
	if (rc < 0)
		errx(1, "stdin: %s", r.err);
	stream_reader_release(&r);
	return 0;
}

/* ---- pack: a stream from text ---- */

#define MAX_TOKENS (8 + STREAM_MAX_LOCS)

static char tokbuf[MAX_TOKENS][STREAM_MAX_STR + 1];
static uint16_t toklen[MAX_TOKENS];
static int ntok, lineno;

/* Splits a line at blanks; "\xHH" in a token is that byte and "\\" a backslash. */
static void
tokenize(const char *line)
{
	ntok = 0;
	for (const char *p = line; *p && *p != '\n';) {
		uint16_t n = 0;

		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p || *p == '\n' || *p == '#')
			break;
		if (ntok == MAX_TOKENS)
			errx(1, "line %d: too many fields", lineno);
		while (*p && *p != ' ' && *p != '\t' && *p != '\n') {
			unsigned b;

			if (n == STREAM_MAX_STR)
				errx(1, "line %d: field too long", lineno);
			if (p[0] == '\\' && p[1] == 'x' && sscanf(p + 2, "%2x", &b) == 1) {
				tokbuf[ntok][n++] = (char)b;
				p += 4;
			} else if (p[0] == '\\' && p[1] == '\\') {
				tokbuf[ntok][n++] = '\\';
				p += 2;
			} else {
				tokbuf[ntok][n++] = *p++;
			}
		}
		tokbuf[ntok][n] = '\0';
		toklen[ntok++] = n;
	}
}

static uint64_t
num(int i)
{
	char *end;
	unsigned long long v;

	if (i >= ntok)
		errx(1, "line %d: field %d is missing", lineno, i);
	v = strtoull(tokbuf[i], &end, 0);
	if (*end || end == tokbuf[i])
		errx(1, "line %d: '%s' is not a number", lineno, tokbuf[i]);
	return v;
}

static struct str
txt(int i)
{
	if (i >= ntok)
		errx(1, "line %d: field %d is missing", lineno, i);
	return (struct str){ tokbuf[i], toklen[i] };
}

/* "raw TYPE HEX...": any payload, bytes in hex (blanks between them allowed); "bytes
 * HEX...": bytes outside any frame (a second header, say). */
static void
raw(int framed)
{
	static uint8_t buf[1 << 16];
	uint32_t n = 0;

	for (int i = framed ? 2 : 1; i < ntok; i++)
		for (const char *p = tokbuf[i]; p[0] && p[1]; p += 2) {
			unsigned b;

			if (n == sizeof(buf) || sscanf(p, "%2x", &b) != 1)
				errx(1, "line %d: bad hex", lineno);
			buf[n++] = (uint8_t)b;
		}
	if (!framed) {
		check(stream_flush(&w));
		if (fwrite(buf, 1, n, stdout) != n || fflush(stdout) != 0)
			err(1, "stdout");
		return;
	}
	check(stream_write(&w, (uint32_t)num(1), buf, n));
}

/* One line, one frame:
 *   defs                                      target, mappings, functions, locations 1-5
 *                                             and thread names of "good"
 *   target PID PROFILES                       a target frame
 *   window-start INDEX START END
 *   window-stack INDEX PID TID COUNT NANOS LOC...
 *   window-offcpu-stack INDEX PID TID COUNT NANOS LOC...
 *   window-end INDEX START END REASON
 *   file INDEX FLAGS KIND NAME TEMP
 *   warning TIME TEXT
 *   round TIME
 *   end TIME REASON
 *   raw TYPE HEX...                           a frame of any type and payload
 *   bytes HEX...                              bytes outside any frame
 * Blank lines and "#" comments are skipped. */
static int
pack(void)
{
	static struct fr_window_stack st;
	static struct fr_window_end we;
	char line[16384];

	while (fgets(line, sizeof(line), stdin)) {
		const char *op;

		lineno++;
		tokenize(line);
		if (!ntok)
			continue;
		op = tokbuf[0];
		if (!strcmp(op, "defs")) {
			definitions();
		} else if (!strcmp(op, "target")) {
			struct fr_target t = { .pid = (uint32_t)num(1), .cpu_frequency = 100,
					       .kind = S("pid"), .profiles = txt(2) };
			check(stream_put_target(&w, &t));
		} else if (!strcmp(op, "window-start")) {
			struct fr_window_start ws = { (uint32_t)num(1), num(2), num(3) };
			check(stream_put_window_start(&w, &ws));
		} else if (!strcmp(op, "window-stack") || !strcmp(op, "window-offcpu-stack")) {
			st = (struct fr_window_stack){ .index = (uint32_t)num(1),
						       .pid = (uint32_t)num(2),
						       .tid = (uint32_t)num(3), .count = num(4),
						       .nanos = num(5) };
			for (int i = 6; i < ntok && st.nlocs < STREAM_MAX_LOCS; i++)
				st.locs[st.nlocs++] = (uint32_t)num(i);
			check(!strcmp(op, "window-stack") ? stream_put_window_stack(&w, &st)
				: stream_put_window_offcpu_stack(&w, &st));
		} else if (!strcmp(op, "window-end")) {
			memset(&we, 0, sizeof(we));
			we.index = (uint32_t)num(1);
			we.start = num(2);
			we.end = num(3);
			we.reason = (uint32_t)num(4);
			check(stream_put_window_end(&w, &we));
		} else if (!strcmp(op, "file")) {
			struct fr_file f = { (uint32_t)num(1), (uint32_t)num(2), txt(3), txt(4),
					     txt(5) };
			check(stream_put_file(&w, &f));
		} else if (!strcmp(op, "warning")) {
			struct fr_warning v = { num(1), txt(2) };
			check(stream_put_warning(&w, &v));
		} else if (!strcmp(op, "round")) {
			check(stream_put_round(&w, &(struct fr_round){ num(1) }));
		} else if (!strcmp(op, "end")) {
			check(stream_put_end(&w, &(struct fr_end){ num(1), (uint32_t)num(2) }));
		} else if (!strcmp(op, "raw") || !strcmp(op, "bytes")) {
			raw(!strcmp(op, "raw"));
		} else {
			errx(1, "line %d: unknown frame '%s'", lineno, op);
		}
	}
	check(stream_flush(&w));
	stream_writer_release(&w);
	return 0;
}

int
main(int argc, char **argv)
{
	struct stream_header h = { .version = STREAM_VERSION, .clockid = 1,
				   .clock_offset_ns = OFFSET, .session_id = SESSION,
				   .e_machine = 62 };
	const char *mode = argc > 1 ? argv[1] : "good";

	if (!strcmp(mode, "dump"))
		return dump();

	check(stream_writer_open(&w, 1, "stdout", &h));
	if (!strcmp(mode, "pack"))
		return pack();
	definitions();
	if (!strcmp(mode, "redefine"))
		location(1, 2, 0x7f0000002000ull, 4, 0, 0, 0);
	if (!strcmp(mode, "missing-func"))
		location(7, 3, 0x401300, 99, 1, 0, 0);
	if (!strcmp(mode, "distinct")) {
		distinct(argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 200000);
	} else if (!strcmp(mode, "odd")) {
		odd();
	} else if (!strcmp(mode, "big")) {
		big(argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 65536);
	} else {
		window_start(0);
		if (strcmp(mode, "empty")) {
			stack(0, 100, 3, 2, 3, 0);
			stack(0, 101, 1, 1, 2, 3);
			stack(0, 102, 1, 4, 3, 0);
		}
		if (!strcmp(mode, "missing-loc"))
			stack(0, 100, 1, 99, 3, 0);
		if (!strcmp(mode, "missing-func"))
			stack(0, 100, 1, 7, 3, 0);
		window_end(0);
		if (strcmp(mode, "empty")) {
			window_start(1);
			stack(1, 101, 5, 3, 0, 0);
			window_end(1);
		}
	}
	check(stream_put_end(&w, &(struct fr_end){ .time = 3 * SEC, .reason = END_INPUT }));
	check(stream_flush(&w));
	stream_writer_release(&w);
	return 0;
}
