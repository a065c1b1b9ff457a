/*
 * A small streaming JSON writer: values go straight to a FILE as they are added, so a
 * document never has to exist in memory whole.
 *
 * The writer tracks nesting on a fixed stack to place commas and to catch misuse (a value
 * in an object without a key, a key inside an array, an unbalanced end).  The first misuse
 * or write error sticks: later calls do nothing and return -1, and json_finish() reports
 * it, so callers may check once at the end.  Strings are escaped fully: '"', '\\', every
 * control character, and bytes that are not valid UTF-8 become U+FFFD, so the output is
 * always valid JSON whatever the input bytes.
 *
 *	struct json j;
 *	json_init(&j, f, 1);
 *	json_object_begin(&j);
 *	json_key(&j, "pid"); json_u64(&j, 42);
 *	json_object_end(&j);
 *	if (json_finish(&j) < 0) ... j.err ...
 *
 * No function here shares a name with jansson's (json_str, json_nil): serve links both,
 * and a name defined twice would take the library's own calls.
 */
#ifndef RP_JSON_H
#define RP_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 32 /* diagnostics nest three deep; 32 bounds any caller bug */

struct json {
	FILE *f;                        /* borrowed: the caller opens and closes it */
	int pretty;                     /* 1: newline and two spaces per level */
	int depth;
	uint8_t is_object[JSON_MAX_DEPTH + 1];
	uint32_t count[JSON_MAX_DEPTH + 1]; /* members written at each level */
	int have_key;                   /* a key was written, its value is due */
	int done;                       /* the top-level value is complete */
	char err[120];                  /* first error, empty while all is well */
};

void json_init(struct json *j, FILE *f, int pretty);

int json_object_begin(struct json *j);
int json_object_end(struct json *j);
int json_array_begin(struct json *j);
int json_array_end(struct json *j);

/* A member name inside an object; the next call must write its value. */
int json_key(struct json *j, const char *key);

int json_str(struct json *j, const char *s);          /* NULL writes null */
int json_string_len(struct json *j, const char *s, size_t len); /* may hold NUL bytes */
int json_i64(struct json *j, int64_t v);
int json_u64(struct json *j, uint64_t v);
int json_double(struct json *j, double v);              /* NaN and infinities: null */
int json_bool(struct json *j, bool v);
int json_nil(struct json *j);

/* key + value in one call, for the common object member. */
int json_kstring(struct json *j, const char *key, const char *s);
int json_ku64(struct json *j, const char *key, uint64_t v);
int json_ki64(struct json *j, const char *key, int64_t v);
int json_kbool(struct json *j, const char *key, bool v);
int json_knull(struct json *j, const char *key);

/* Checks that the document is complete and was written without error, writes a final
 * newline and flushes.  0, or -1 with j->err set. */
int json_finish(struct json *j);

#endif
