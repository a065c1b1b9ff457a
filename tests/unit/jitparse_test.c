/* unwind: the perf map and jitdump parsers (jitparse.c) on files as JIT runtimes write them,
 * grown in steps, and on the damaged and oversized input the caps are for. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../unwind/jitparse.h"

#include "check.h"

static const char *
name_at(struct jittab *t, uint64_t addr)
{
	const struct jitsym *s = jittab_find(t, addr);
	return s ? s->name : NULL;
}

static int
is(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

static void
perfmap(void)
{
	struct jittab t;
	jittab_init(&t);
	const char *text = "7f0000001000 40 JS:*fibHot /tmp/hot.js:1:16\n"
			   "0x7f0000002000 0x80 LJava/lang/String;::hashCode\r\n"
			   "zz 10 not hex\n"
			   "7f0000003000 0 empty\n"
			   "7f0000004000 10\n"
			   "ffffffffffffffff 10 wraps\n"
			   "7f0000001010 8 JS:*again\n"
			   "7f0000005000 10 cut at the end";
	long used = jit_perfmap_parse(&t, text, strlen(text));
	/* The last line has no newline yet: the runtime is still writing it. */
	CHECK(used == (long)(strrchr(text, '\n') - text + 1));
	CHECK(t.n == 3);
	CHECK(t.malformed == 4);
	CHECK(is(name_at(&t, 0x7f0000001000), "JS:*fibHot /tmp/hot.js:1:16"));
	CHECK(is(name_at(&t, 0x7f000000103f), "JS:*fibHot /tmp/hot.js:1:16"));
	CHECK(is(name_at(&t, 0x7f0000001014), "JS:*again")); /* the later definition wins */
	CHECK(is(name_at(&t, 0x7f0000002000), "LJava/lang/String;::hashCode"));
	CHECK(!name_at(&t, 0x7f0000001040));
	CHECK(!name_at(&t, 0x7f0000000fff));
	/* The file grew: the rest is read from where the last call stopped. */
	const char *more = "7f0000005000 10 cut at the end\n";
	CHECK(jit_perfmap_parse(&t, more, strlen(more)) == (long)strlen(more));
	CHECK(is(name_at(&t, 0x7f0000005008), "cut at the end"));
	jittab_release(&t);
}

static void
caps(void)
{
	struct jittab t;
	jittab_init(&t);
	size_t len = JIT_MAX_NAME + 100;
	char *line = malloc(len + 32);
	int n = snprintf(line, 32, "1000 10 ");
	memset(line + n, 'x', len);
	line[n + len] = '\n';
	CHECK(jit_perfmap_parse(&t, line, (size_t)n + len + 1) == (long)(n + len + 1));
	CHECK(t.truncated == 1);
	CHECK(name_at(&t, 0x1000) && strlen(name_at(&t, 0x1000)) == JIT_MAX_NAME);
	free(line);
	/* Symbols beyond the cap are dropped and counted. */
	char buf[64];
	for (uint64_t i = 1; i <= JIT_MAX_SYMBOLS; i++) {
		int k = snprintf(buf, sizeof(buf), "%llx 1 f\n", (unsigned long long)(0x10000 + i));
		jit_perfmap_parse(&t, buf, (size_t)k);
	}
	CHECK(t.n == JIT_MAX_SYMBOLS);
	CHECK(t.dropped == 1);
	jittab_release(&t);
}

static uint8_t dump[4096];
static size_t dlen;

static void
put(const void *p, size_t n)
{
	memcpy(dump + dlen, p, n);
	dlen += n;
}

static void
put32(uint32_t v)
{
	put(&v, 4);
}

static void
put64(uint64_t v)
{
	put(&v, 8);
}

static void
header(uint32_t total)
{
	put32(0x4A695444);
	put32(1);
	put32(total);
	put32(62);
	put32(0);
	put32(4242);
	put64(0);
	put64(0);
	while (dlen < total)
		dump[dlen++] = 0;
}

static void
load(uint64_t addr, uint64_t size, uint64_t index, const char *name, size_t code)
{
	size_t nl = strlen(name) + 1;
	put32(0);
	put32((uint32_t)(16 + 40 + nl + code));
	put64(0);
	put32(4242);
	put32(4243);
	put64(addr);
	put64(addr);
	put64(size);
	put64(index);
	put(name, nl);
	memset(dump + dlen, 0xcc, code);
	dlen += code;
}

static void
move(uint64_t from, uint64_t to, uint64_t size, uint64_t index)
{
	put32(1);
	put32(16 + 48);
	put64(0);
	put32(4242);
	put32(4243);
	put64(to);
	put64(from);
	put64(to);
	put64(size);
	put64(index);
}

static void
jitdump(void)
{
	struct jittab t;
	struct jitdump_state s = { 0 };
	jittab_init(&t);
	dlen = 0;
	header(48); /* a longer header than the fields known: its total_size says where records start */
	load(0x5000, 0x40, 7, "JS:*hot", 16);
	size_t first = dlen;
	put32(2); /* debug info: skipped */
	put32(16 + 16);
	put64(0);
	put64(0x5000);
	put64(0);
	put32(3); /* close */
	put32(16);
	put64(0);
	load(0x6000, 0x20, 8, "JS:~cold", 4);
	move(0x6000, 0x9000, 0x20, 8);
	CHECK(jit_dump_parse(&t, &s, dump, 30) == 0);          /* not even the header yet */
	CHECK(jit_dump_parse(&t, &s, dump, first + 3) == (long)first); /* one whole record */
	CHECK(is(name_at(&t, 0x5010), "JS:*hot"));
	CHECK(jit_dump_parse(&t, &s, dump + first, dlen - first) == (long)(dlen - first));
	CHECK(is(name_at(&t, 0x6010), "JS:~cold"));
	CHECK(is(name_at(&t, 0x9010), "JS:~cold")); /* moved, under its name */
	CHECK(t.malformed == 0);
	/* A record that says it is shorter than its header: nothing after it is trusted. */
	size_t end = dlen;
	put32(0);
	put32(8);
	put64(0);
	load(0xa000, 0x10, 9, "after", 0);
	CHECK(jit_dump_parse(&t, &s, dump + end, dlen - end) == 0);
	CHECK(s.bad && t.malformed == 1 && !name_at(&t, 0xa000));
	jittab_release(&t);

	/* A wrong magic is no jitdump: nothing is read from it. */
	struct jitdump_state bad = { 0 };
	jittab_init(&t);
	memset(dump, 0, 64);
	memcpy(dump, "ELF!", 4);
	CHECK(jit_dump_parse(&t, &bad, dump, 64) == 0 && bad.bad);
	jittab_release(&t);
}

static void
truncated_records(void)
{
	struct jittab t;
	struct jitdump_state s = { 0 };
	jittab_init(&t);
	dlen = 0;
	header(40);
	/* A load whose name runs to the end of its record, and a move of an unknown index. */
	put32(0);
	put32(16 + 40 + 3);
	put64(0);
	put32(1);
	put32(1);
	put64(0x100);
	put64(0x100);
	put64(0x10);
	put64(1);
	put("abc", 3);
	move(0x100, 0x200, 0x10, 99);
	CHECK(jit_dump_parse(&t, &s, dump, dlen) == (long)dlen);
	CHECK(t.n == 0 && t.malformed == 2);
	jittab_release(&t);
}

int
main(void)
{
	perfmap();
	caps();
	jitdump();
	truncated_records();
	printf("jitparse: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
