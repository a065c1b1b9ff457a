/*
 * JSLB container writer and decoder (lib/jslb.c), and the breakpad ids and string table of
 * emit-firefox: round trips, the exact layout, and every refusal the reference asks for.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../emit-firefox/fxmodel.h"
#include "../../emit-firefox/fxstr.h"
#include "breakpad.h"
#include "jslb.h"

#include "check.h"

struct buf {
	uint8_t *p;
	size_t len, cap;
};

static int
put(void *ctx, const void *p, size_t n)
{
	struct buf *b = ctx;

	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2;
		if (!(b->p = realloc(b->p, b->cap)))
			return -1;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
	return 0;
}

/* Decodes b into text (NUL-terminated, static); returns the decoder's status. */
static int
decode(const struct buf *b, char *text, size_t textlen, char *why, size_t max_out)
{
	FILE *f = fmemopen(text, textlen, "w");
	int rc;

	why[0] = 0;
	rc = jslb_decode(b->p, b->len, f, max_out, why, 200);
	fputc(0, f);
	fclose(f);
	return rc;
}

static uint32_t
rd32(const uint8_t *p)
{
	return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void
wr32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* A container with an Int32, a Uint8, a Float64 and a nested JSON slab under the root. */
static void
build(struct buf *out)
{
	static const int32_t i32[] = { 0, -1, 2147483647 };
	static const uint8_t u8[] = { 7 };
	static const double f64[] = { 0.1, 1795949875128.1228, 20.408163 };
	static const char inner[] = "{\"a\":{\"$s\":1},\"s\":\"{\\\"$s\\\":0}\"}";
	struct jslb b;
	char root[100];
	long r;

	jslb_init(&b);
	CHECK(jslb_add_i32(&b, i32, 3) == 0);
	CHECK(jslb_add_u8(&b, u8, 1) == 1);
	CHECK(jslb_add_f64(&b, f64, 3) == 2);
	CHECK(jslb_add_json(&b, inner, strlen(inner)) == 3);
	snprintf(root, sizeof(root), "{\"i\":{\"$s\":0},\"f\":{ \"$s\" : 2 },\"n\":{\"$s\":3}}\n");
	r = jslb_add_json(&b, root, strlen(root));
	CHECK(r == 4);
	b.root = (uint32_t)r;
	memset(out, 0, sizeof(*out));
	CHECK(jslb_write(&b, put, out) == 0);
	jslb_release(&b);
}

static void
test_round_trip(void)
{
	struct buf b;
	char text[1000], why[200];

	build(&b);
	CHECK(!memcmp(b.p, "\xdc\xdf" "JSLB\x01\x00", 8));
	CHECK(rd32(b.p + 8) == 1 && rd32(b.p + 12) == 5 && rd32(b.p + 16) == 4);
	for (uint32_t i = 0; i < 5; i++) {
		const uint8_t *e = b.p + 20 + 12 * i;
		size_t sz = jslb_type_size(rd32(e));
		CHECK(sz && rd32(e + 4) % sz == 0 && rd32(e + 8) % sz == 0);
		CHECK(rd32(e + 4) >= 20 + 12 * 5 && rd32(e + 4) + rd32(e + 8) <= b.len);
	}
	CHECK(rd32(b.p + 20 + 24 + 4) % 8 == 0);        /* the Float64 slab */
	CHECK(decode(&b, text, sizeof(text), why, 1 << 20) == 0);
	CHECK(!strcmp(text, "{\"i\":[0,-1,2147483647],\"f\":[0.1,1795949875128.1228,20.408163],"
			    "\"n\":{\"a\":[7],\"s\":\"{\\\"$s\\\":0}\"}}\n"));
	CHECK(decode(&b, text, sizeof(text), why, 20) < 0 && strstr(why, "larger than"));
	free(b.p);
}

/* Breaks a copy of a good container with edit, then expects a refusal naming want. */
static void
refuse(void (*edit)(struct buf *), const char *want)
{
	struct buf b;
	char text[1000], why[200];

	build(&b);
	edit(&b);
	CHECK(decode(&b, text, sizeof(text), why, 1 << 20) < 0);
	if (!strstr(why, want)) {
		failed++;
		fprintf(stderr, "wanted '%s', got '%s'\n", want, why);
	}
	free(b.p);
}

static void bad_magic(struct buf *b) { b->p[2] = 'X'; }
static void bad_version(struct buf *b) { wr32(b->p + 8, 2); }
static void bad_root(struct buf *b) { wr32(b->p + 16, 5); }
static void typed_root(struct buf *b) { wr32(b->p + 16, 0); }
static void big_count(struct buf *b) { wr32(b->p + 12, 1000); }
static void unaligned(struct buf *b) { wr32(b->p + 20 + 4, rd32(b->p + 20 + 4) + 2); }
static void bad_type(struct buf *b) { wr32(b->p + 20, 0x0b); }
static void overlap(struct buf *b) { wr32(b->p + 32 + 4, rd32(b->p + 20 + 4)); }
static void truncated(struct buf *b) { b->len -= 5; }
static void in_table(struct buf *b) { wr32(b->p + 20 + 4, 20); }
static void missing_slab(struct buf *b)
{
	uint8_t *m = memmem(b->p, b->len, "\"$s\":3", 6);
	m[5] = '9';
}
static void self_ref(struct buf *b)
{
	/* the nested JSON slab refers to itself */
	uint8_t *m = memmem(b->p, b->len, "\"a\":{\"$s\":1}", 12);
	m[10] = '3';
}
static void
test_refusals(void)
{
	refuse(bad_magic, "bad magic");
	refuse(bad_version, "unsupported jslb version 2");
	refuse(bad_root, "root slab 5 out of range");
	refuse(typed_root, "root slab 0 is not JSON");
	refuse(big_count, "passes the end");
	refuse(unaligned, "not aligned");
	refuse(bad_type, "unknown type");
	refuse(overlap, "overlap");
	refuse(truncated, "outside the file");
	refuse(in_table, "outside the file");
	refuse(missing_slab, "placeholder names slab 9");
	refuse(self_ref, "nest deeper");
}

static void
test_breakpad(void)
{
	char id[34];

	/* the reference's example */
	breakpad_id("4f1c2e9a7b3d5e6f8091a2b3c4d5e6f708192a3b", id);
	CHECK(!strcmp(id, "9A2E1C4F3D7B6F5E8091A2B3C4D5E6F70"));
	/* a short build id is zero-padded to 16 bytes */
	breakpad_id("01020304", id);
	CHECK(!strcmp(id, "04030201000000000000000000000000" "0"));
	breakpad_id("", id);
	CHECK(!strcmp(id, ""));
}

static void
test_strings(void)
{
	struct fxstr s;
	size_t len;
	char name[32];

	fxstr_init(&s);
	CHECK(fxstr_cstr(&s, "main") == 0);
	CHECK(fxstr_cstr(&s, "") == 1);
	CHECK(fxstr_cstr(&s, "main") == 0);
	for (int i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		CHECK(fxstr_cstr(&s, name) == i + 2);
	}
	CHECK(fxstr_cstr(&s, "f4999") == 5001);
	CHECK(!memcmp(fxstr_at(&s, 5001, &len), "f4999", 5) && len == 5);
	fxstr_clear(&s);
	CHECK(fxstr_cstr(&s, "f7") == 0);
	fxstr_release(&s);
}

int
main(void)
{
	test_round_trip();
	test_refusals();
	test_breakpad();
	test_strings();
	printf("jslb_test: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
