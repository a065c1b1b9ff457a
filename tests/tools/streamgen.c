/*
 * streamgen: writes small synthetic rustprofile streams for the tests, and streams as text.
 *
 * usage: streamgen good | empty | missing-loc | missing-func | redefine | big N
 *        streamgen pack < text | unpack < stream | layout | dump < stream
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
 *   pack          reads a stream as text on stdin (lib/frametext.h, and pack() below)
 *                 and writes it: the crafted streams of tests/streams/
 *   unpack        reads a stream on stdin and prints it as that text: pack reads it back
 *                 into the same bytes
 *   layout        prints every frame type's fields as docs/stream-format.md lists them
 *                 (tests/stream-spec.bats)
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
#include <unistd.h>

#include "frametab.h"
#include "frametext.h"
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

/* ---- pack and unpack: streams as text (lib/frametext.h) ---- */

static int lineno;

/* "bytes HEX...": bytes outside any frame (a second header, say). */
static void
bytes(const char *line)
{
	size_t cap = strlen(line) / 2 + 1;
	uint8_t *buf = malloc(cap);
	long n = buf ? stream_hex_parse(line + strlen("bytes"), buf, cap) : -1;

	if (n < 0)
		errx(1, "line %d: bad hex", lineno);
	check(stream_flush(&w));
	if (fwrite(buf, 1, (size_t)n, stdout) != (size_t)n || fflush(stdout) != 0)
		err(1, "stdout");
	free(buf);
}

/* "header FIELD=VALUE...": the stream header, before any frame (else the fixtures' one). */
static void
header(char *line, struct stream_header *h)
{
	char *save, *word = strtok_r(line, " \t\n", &save);

	while ((word = strtok_r(NULL, " \t\n", &save))) {
		char *key = word, *eq = strchr(word, '='), *end;
		if (!eq || eq[1] == '\0')
			errx(1, "line %d: '%s' is not FIELD=NUMBER", lineno, word);
		*eq = '\0';
		/* The offset is signed, the session id all 64 bits. */
		uint64_t v = eq[1] == '-' ? (uint64_t)strtoll(eq + 1, &end, 0) :
					    strtoull(eq + 1, &end, 0);
		if (*end)
			errx(1, "line %d: '%s' is not a number", lineno, eq + 1);
		if (!strcmp(key, "clockid"))
			h->clockid = (uint32_t)v;
		else if (!strcmp(key, "e_machine"))
			h->e_machine = (uint32_t)v;
		else if (!strcmp(key, "clock_offset_ns"))
			h->clock_offset_ns = (int64_t)v;
		else if (!strcmp(key, "session_id"))
			h->session_id = v;
		else
			errx(1, "line %d: no header field '%s'", lineno, key);
	}
}

/* One line, one frame, as lib/frametext.h says, and these of this tool:
 *   header FIELD=VALUE...                     clockid, e_machine, clock_offset_ns and
 *                                             session_id of the header (first line only)
 *   defs                                      target, mappings, functions, locations 1-5
 *                                             and thread names of "good"
 *   bytes HEX...                              bytes outside any frame */
static int
pack(struct stream_header *h)
{
	char *line = NULL, op[32], why[300];
	size_t cap = 0;
	int opened = 0, rc;

	while (getline(&line, &cap, stdin) > 0) {
		lineno++;
		if (sscanf(line, " %31s", op) != 1 || op[0] == '#')
			continue;
		if (!strcmp(op, "header")) {
			if (opened)
				errx(1, "line %d: a header after the first frame", lineno);
			header(line, h);
			continue;
		}
		if (!opened++)
			check(stream_writer_open(&w, 1, "stdout", h));
		if (!strcmp(op, "defs"))
			definitions();
		else if (!strcmp(op, "bytes"))
			bytes(line);
		else if ((rc = stream_frame_pack(&w, line, why, sizeof(why))) < 0)
			errx(1, "line %d: %s", lineno, why);
		else if (rc == 0)
			errx(1, "line %d: unknown frame '%s'", lineno, op);
	}
	if (!opened)
		check(stream_writer_open(&w, 1, "stdout", h));
	check(stream_flush(&w));
	stream_writer_release(&w);
	free(line);
	return 0;
}

/* A stream as the text pack reads back into the same bytes: the header, a line per frame,
 * and whatever follows the last whole frame as bytes. */
static int
unpack(void)
{
	struct stream_reader r;
	struct stream_header h;
	struct frame f;
	uint8_t rest[65536];
	ssize_t n;
	int rc;

	if (stream_reader_open(&r, 0, "stdin", &h) < 0)
		errx(1, "stdin: %s", r.err);
	r.order.rules = ORDER_NONE;
	if (r.offset != STREAM_HEADER_SIZE)
		printf("# a header of %llu bytes, packed as %d\n", (unsigned long long)r.offset,
		       STREAM_HEADER_SIZE);
	printf("header clockid=%u e_machine=%u clock_offset_ns=%lld session_id=0x%016llx\n",
	       h.clockid, h.e_machine, (long long)h.clock_offset_ns,
	       (unsigned long long)h.session_id);
	while ((rc = stream_read(&r, &f)) > 0)
		if (stream_frame_print(stdout, &f) < 0)
			err(1, "stdout");
	if (rc < 0) {
		/* What the reader holds, and the rest of a pipe (a file is mapped whole). */
		printf("# %s\nbytes ", r.err);
		stream_hex_print(stdout, r.buf + r.pos, r.len - r.pos);
		while (!r.map && (n = read(0, rest, sizeof(rest))) > 0)
			stream_hex_print(stdout, rest, (size_t)n);
		printf("\n");
	}
	stream_reader_release(&r);
	if (fflush(stdout) != 0)
		err(1, "stdout");
	return 0;
}

/* The layout of every frame type in the words of docs/stream-format.md, one line per group
 * of fields (the first ones, then each appended group): "NAME (TYPE) FIELD, FIELD...". */
static const char *const kind_word[] = {
	[FK_U8] = "u8", [FK_U16] = "u16", [FK_U32] = "u32", [FK_U64] = "u64",
	[FK_I32] = "i32", [FK_STR] = "str", [FK_BID] = "bid", [FK_RESERVED] = "u32",
};

static const char *
member_name(const struct frame_desc *d, struct frame_member m)
{
	for (size_t i = 0; i < d->nfields; i++)
		if (d->fields[i].kind >= FK_U8 && d->fields[i].kind <= FK_I32 &&
		    d->fields[i].off == m.off)
			return d->fields[i].name;
	return "?";
}

static void
layout_field(const struct frame_desc *d, const struct frame_field *fl)
{
	const char *a = member_name(d, fl->a), *b = member_name(d, fl->b);

	if (fl->kind != FK_ARRAY && fl->kind != FK_PACKED) {
		printf("%s %s", kind_word[fl->kind], fl->name);
		return;
	}
	if (fl->elem == FK_REC) {
		printf("%s × (", a);
		for (uint8_t k = 0; k < fl->nsub; k++)
			printf("%s%s %s", k ? ", " : "", kind_word[fl->sub[k].kind],
			       fl->sub[k].name);
		printf(")");
		return;
	}
	printf("%s %s[", kind_word[fl->elem], fl->name);
	if (fl->count == COUNT_SUM)
		printf("%s + %s]", a, b);
	else if (fl->count == COUNT_SPANS)
		printf("(1 + %s) × %s]", a, b);
	else
		printf("%s]", a);
}

static int
layout(void)
{
	for (uint32_t t = 0; t < stream_frame_types(); t++) {
		const struct frame_desc *d = stream_frame_desc(t);
		const char *sep = "";
		if (!d)
			continue;
		printf("%s (%u) ", d->name, t);
		for (size_t i = 0; i < d->nfields; i++) {
			const struct frame_field *fl = &d->fields[i];
			if (fl->kind == FK_APPENDED) {
				printf("\n%s (%u) ", d->name, t);
				sep = "";
			} else if (fl->kind < FK_APPENDED) { /* a field, not a rule */
				printf("%s", sep);
				layout_field(d, fl);
				sep = ", ";
			}
		}
		printf("\n");
	}
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
	if (!strcmp(mode, "unpack"))
		return unpack();
	if (!strcmp(mode, "layout"))
		return layout();
	if (!strcmp(mode, "pack"))
		return pack(&h);
	check(stream_writer_open(&w, 1, "stdout", &h));
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
