/*
 * Unit tests of the protobuf writer (lib/pb.c) and of emit-pprof's string table and id
 * map, which sit directly on it: varint edge cases, nested message lengths that need one,
 * two or three bytes, and string deduplication with "" at index 0.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "pb.h"
#include "idmap.h"
#include "../../emit-pprof/strtab.h"

#include "check.h"

static int
bytes_are(const struct pb *b, const char *hex)
{
	char got[512] = "";
	size_t i;

	for (i = 0; i < b->len && 2 * i + 2 < sizeof(got); i++)
		snprintf(got + 2 * i, 3, "%02x", b->buf[i]);
	if (strcmp(got, hex) == 0)
		return 1;
	fprintf(stderr, "  got %s, want %s\n", got, hex);
	return 0;
}

static void
test_varints(void)
{
	static const struct {
		uint64_t v;
		const char *hex;
	} cases[] = {
		{ 0, "00" },
		{ 1, "01" },
		{ 127, "7f" },
		{ 128, "8001" },
		{ 300, "ac02" },
		{ 16383, "ff7f" },
		{ 16384, "808001" },
		{ UINT32_MAX, "ffffffff0f" },
		{ (uint64_t)1 << 63, "80808080808080808001" },
		{ UINT64_MAX, "ffffffffffffffffff01" },
	};
	struct pb b;
	size_t i;

	pb_init(&b);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pb_reset(&b);
		pb_varint(&b, cases[i].v);
		CHECK(bytes_are(&b, cases[i].hex));
		CHECK(pb_varint_size(cases[i].v) == b.len);
	}
	for (i = 1; i < 64; i++) {      /* every boundary 2^k - 1 / 2^k */
		uint64_t v = (uint64_t)1 << i;

		CHECK(pb_varint_size(v - 1) == (i + 6) / 7);
		CHECK(pb_varint_size(v) == i / 7 + 1);
	}
	pb_reset(&b);
	pb_int(&b, 3, -1);              /* int64 -1: two's complement, ten bytes, no zigzag */
	CHECK(bytes_are(&b, "18ffffffffffffffffff01"));
	pb_reset(&b);
	pb_uint_opt(&b, 1, 0);
	CHECK(b.len == 0);
	pb_uint_opt(&b, 1, 5);
	pb_uint(&b, 2, 0);
	pb_bytes(&b, 6, "hi", 2);
	pb_uint(&b, 20, 1);             /* field 20: a two-byte tag */
	CHECK(bytes_are(&b, "0805100032026869a00101"));
	CHECK(!pb_failed(&b));
	pb_release(&b);
}

/* Walks a message and checks that every length-delimited field of the given numbers holds
 * a well-formed message too; returns the number of fields seen, or -1. */
static int
walk(const uint8_t *p, size_t n, uint32_t nested_field)
{
	size_t i = 0;
	int count = 0;

	while (i < n) {
		uint64_t key = 0, len = 0;
		int shift = 0;

		do
			key |= (uint64_t)(p[i] & 0x7f) << shift, shift += 7;
		while (p[i++] & 0x80 && i < n);
		if ((key & 7) == PB_VARINT) {
			while (i < n && p[i] & 0x80)
				i++;
			i++;
		} else if ((key & 7) == PB_LEN) {
			shift = 0;
			do
				len |= (uint64_t)(p[i] & 0x7f) << shift, shift += 7;
			while (p[i++] & 0x80 && i < n);
			if (len > n - i)
				return -1;
			if ((key >> 3) == nested_field && walk(p + i, len, nested_field) < 0)
				return -1;
			i += len;
		} else {
			return -1;
		}
		count++;
	}
	return i == n ? count : -1;
}

static void
test_nested(size_t body, const char *len_hex)
{
	struct pb b;
	size_t m, i;
	char want[64];

	pb_init(&b);
	pb_uint(&b, 1, 7);
	m = pb_open(&b, 2);
	for (i = 0; i < body; i++)
		pb_raw(&b, "\x08", 1), i++, pb_raw(&b, "\x01", 1);  /* field 1 = 1 pairs */
	pb_close(&b, m);
	pb_uint(&b, 3, 9);
	snprintf(want, sizeof(want), "0807" "12%s", len_hex);
	CHECK(b.len == 2 + 1 + strlen(len_hex) / 2 + body + 2);
	CHECK(memcmp(b.buf, "\x08\x07\x12", 3) == 0);
	CHECK(b.buf[b.len - 2] == 0x18 && b.buf[b.len - 1] == 9);      /* trailer intact */
	CHECK(walk(b.buf, b.len, 2) == 3);
	b.len = 3 + strlen(len_hex) / 2;
	CHECK(bytes_are(&b, want));
	pb_release(&b);
}

static void
test_nesting_depth(void)
{
	struct pb b;
	size_t outer, inner, i;

	pb_init(&b);
	/* The inner body needs a two-byte length: the outer length must include the slide. */
	outer = pb_open(&b, 2);
	pb_uint(&b, 1, 1);
	inner = pb_open(&b, 2);
	for (i = 0; i < 100; i++)
		pb_uint(&b, 1, 300);
	pb_close(&b, inner);
	pb_close(&b, outer);
	CHECK(walk(b.buf, b.len, 2) == 1);
	CHECK(b.buf[0] == 0x12 && b.buf[1] == 0xb1 && b.buf[2] == 0x02);     /* 305 */
	CHECK(b.buf[5] == 0x12 && b.buf[6] == 0xac && b.buf[7] == 0x02);     /* 300 */
	/* An empty nested message and an empty packed list are a tag and a zero length. */
	pb_reset(&b);
	pb_close(&b, pb_open(&b, 4));
	CHECK(bytes_are(&b, "2200"));
	pb_release(&b);
}

static void
test_strtab(void)
{
	struct strtab t;
	int64_t a, c;

	CHECK(strtab_init(&t) == 0);
	CHECK(bytes_are(&t.enc, "3200"));       /* string_table[0] = "" */
	CHECK(strtab_add(&t, "", 0) == 0);
	a = strtab_cstr(&t, "main");
	c = strtab_cstr(&t, "cpu");
	CHECK(a == 1 && c == 2);
	CHECK(strtab_add(&t, "mainly", 4) == a);
	CHECK(strtab_cstr(&t, "cpu") == c);
	CHECK(bytes_are(&t.enc, "3200" "32046d61696e" "3203637075"));
	for (int i = 0; i < 5000; i++) {        /* grow the table several times */
		char s[16];

		snprintf(s, sizeof(s), "s%d", i);
		CHECK(strtab_cstr(&t, s) == 3 + i);
	}
	CHECK(strtab_cstr(&t, "s4321") == 3 + 4321 && strtab_cstr(&t, "main") == a);
	CHECK(walk(t.enc.buf, t.enc.len, 0) == 5003);
	CHECK(strtab_reset(&t) == 0 && t.enc.len == 2 && strtab_cstr(&t, "x") == 1);
	strtab_release(&t);
}

static void
test_idmap(void)
{
	struct idmap m;
	uint32_t v = 0, i, bad = 0;

	idmap_init(&m);
	CHECK(!idmap_get(&m, 5, &v));
	for (i = 0; i < 100000; i++)
		if (idmap_put(&m, (uint64_t)i * 4096, i + 1) < 0)
			bad++;
	for (i = 0; i < 100000; i++)
		if (!idmap_get(&m, (uint64_t)i * 4096, &v) || v != i + 1)
			bad++;
	CHECK(bad == 0);
	CHECK(!idmap_get(&m, 1, &v));
	CHECK(idmap_put(&m, 0, 42) == 0 && idmap_get(&m, 0, &v) && v == 42);
	idmap_clear(&m);
	CHECK(m.count == 0 && !idmap_get(&m, 4096, &v));
	idmap_release(&m);
}

int
main(void)
{
	test_varints();
	test_nested(0, "00");
	test_nested(126, "7e");
	test_nested(128, "8001");
	test_nested(16384, "808001");
	test_nesting_depth();
	test_strtab();
	test_idmap();
	printf("pb_test: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
