/* lib/json: escaping, invalid UTF-8, nesting and commas, numbers, misuse. */
#include "json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

struct buf {
	char *p;
	size_t len;
	FILE *f;
	struct json j;
};

static void
open_buf(struct buf *b, int pretty)
{
	b->p = NULL;
	b->len = 0;
	b->f = open_memstream(&b->p, &b->len);
	if (!b->f) {
		perror("open_memstream");
		exit(2);
	}
	json_init(&b->j, b->f, pretty);
}

/* Finishes the document and compares it with want (json_finish adds the newline). */
static int
close_buf(struct buf *b, const char *want)
{
	int rc = json_finish(&b->j), ok;

	fclose(b->f);
	ok = rc == 0 && strlen(b->p) == strlen(want) + 1 && strncmp(b->p, want, strlen(want)) == 0;
	if (!ok)
		fprintf(stderr, "want <%s>\n got <%s> err <%s>\n", want, b->p ? b->p : "",
			b->j.err);
	free(b->p);
	return ok;
}

static int
string_is(const char *in, size_t len, const char *want)
{
	struct buf b;

	open_buf(&b, 0);
	json_string_len(&b.j, in, len);
	return close_buf(&b, want);
}

#define STR(in, want) string_is(in, sizeof(in) - 1, want)

static void
test_escaping(void)
{
	CHECK(STR("plain", "\"plain\""));
	CHECK(STR("", "\"\""));
	CHECK(STR("a\"b\\c", "\"a\\\"b\\\\c\""));
	CHECK(STR("\n\t\r\b\f", "\"\\n\\t\\r\\b\\f\""));
	CHECK(STR("\x01\x1f\x7f", "\"\\u0001\\u001f\\u007f\""));
	CHECK(STR("a\0b", "\"a\\u0000b\""));
	CHECK(STR("/", "\"/\""));
	/* valid UTF-8 passes through: 2, 3 and 4 byte sequences */
	CHECK(STR("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\""));
	CHECK(STR("\xef\xbf\xbd", "\"\xef\xbf\xbd\""));
}

static void
test_invalid_utf8(void)
{
	const char *rep = "\xef\xbf\xbd";
	char want[64];

	snprintf(want, sizeof(want), "\"a%sb\"", rep);
	CHECK(STR("a\xff" "b", want));          /* never valid */
	CHECK(STR("a\x80" "b", want));          /* lone continuation */
	CHECK(STR("a\xc3" "b", want));          /* cut 2-byte */
	CHECK(STR("a\xe2\x82" "b", want));      /* cut 3-byte: one replacement */
	CHECK(STR("a\xf0\x9f\x98" "b", want));  /* cut 4-byte: one replacement */
	snprintf(want, sizeof(want), "\"a%s%sb\"", rep, rep);
	CHECK(STR("a\xc0\xaf" "b", want));      /* overlong '/' */
	snprintf(want, sizeof(want), "\"a%s%s%sb\"", rep, rep, rep);
	CHECK(STR("a\xed\xa0\x80" "b", want));  /* surrogate */
	snprintf(want, sizeof(want), "\"a%s%s%s%sb\"", rep, rep, rep, rep);
	CHECK(STR("a\xf4\x90\x80\x80" "b", want)); /* above U+10FFFF */
	snprintf(want, sizeof(want), "\"%s\"", rep);
	CHECK(STR("\xe2\x82", want));           /* cut at the end of input */
}

static void
test_nesting(void)
{
	struct buf b;

	open_buf(&b, 0);
	json_object_begin(&b.j);
	json_ku64(&b.j, "a", 1);
	json_key(&b.j, "list");
	json_array_begin(&b.j);
	json_u64(&b.j, 1);
	json_array_begin(&b.j);
	json_array_end(&b.j);
	json_object_begin(&b.j);
	json_object_end(&b.j);
	json_str(&b.j, "x");
	json_array_end(&b.j);
	json_key(&b.j, "o");
	json_object_begin(&b.j);
	json_kbool(&b.j, "t", true);
	json_kbool(&b.j, "f", false);
	json_knull(&b.j, "n");
	json_kstring(&b.j, "s", NULL);
	json_object_end(&b.j);
	json_kstring(&b.j, "k\"ey", "v");
	json_object_end(&b.j);
	CHECK(close_buf(&b, "{\"a\":1,\"list\":[1,[],{},\"x\"],"
			    "\"o\":{\"t\":true,\"f\":false,\"n\":null,\"s\":null},\"k\\\"ey\":\"v\"}"));

	open_buf(&b, 1);
	json_object_begin(&b.j);
	json_ku64(&b.j, "a", 1);
	json_key(&b.j, "b");
	json_array_begin(&b.j);
	json_u64(&b.j, 2);
	json_u64(&b.j, 3);
	json_array_end(&b.j);
	json_key(&b.j, "e");
	json_object_begin(&b.j);
	json_object_end(&b.j);
	json_object_end(&b.j);
	CHECK(close_buf(&b, "{\n  \"a\": 1,\n  \"b\": [\n    2,\n    3\n  ],\n  \"e\": {}\n}"));
}

static void
test_numbers(void)
{
	struct buf b;

	open_buf(&b, 0);
	json_array_begin(&b.j);
	json_i64(&b.j, INT64_MIN);
	json_u64(&b.j, UINT64_MAX);
	json_i64(&b.j, -1);
	json_double(&b.j, 0.1);
	json_double(&b.j, 0.5);
	json_double(&b.j, 1.0 / 3.0);
	json_double(&b.j, 0.0 / 0.0);
	json_double(&b.j, 1e300 * 1e300);
	json_double(&b.j, 2.0);
	json_array_end(&b.j);
	CHECK(close_buf(&b, "[-9223372036854775808,18446744073709551615,-1,0.1,0.5,"
			    "0.3333333333333333,null,null,2]"));
}

static int
misuse_fails(int which)
{
	struct buf b;
	int rc;

	open_buf(&b, 0);
	switch (which) {
	case 0: /* value in an object without a key */
		json_object_begin(&b.j);
		json_u64(&b.j, 1);
		break;
	case 1: /* key in an array */
		json_array_begin(&b.j);
		json_key(&b.j, "k");
		break;
	case 2: /* mismatched end */
		json_object_begin(&b.j);
		json_array_end(&b.j);
		break;
	case 3: /* unclosed */
		json_array_begin(&b.j);
		break;
	case 4: /* two top-level values */
		json_u64(&b.j, 1);
		json_u64(&b.j, 2);
		break;
	case 5: /* key left without a value */
		json_object_begin(&b.j);
		json_key(&b.j, "k");
		json_object_end(&b.j);
		break;
	default: /* too deep */
		for (int i = 0; i < JSON_MAX_DEPTH + 1; i++)
			json_array_begin(&b.j);
		break;
	}
	rc = json_finish(&b.j);
	fclose(b.f);
	free(b.p);
	return rc < 0 && b.j.err[0] != '\0';
}

int
main(void)
{
	test_escaping();
	test_invalid_utf8();
	test_nesting();
	test_numbers();
	for (int i = 0; i <= 6; i++)
		CHECK(misuse_fails(i));
	printf("json_test: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
