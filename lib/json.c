#include "json.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static int
fail(struct json *j, const char *fmt, ...)
{
	va_list ap;

	if (j->err[0] == '\0') {
		va_start(ap, fmt);
		vsnprintf(j->err, sizeof(j->err), fmt, ap);
		va_end(ap);
	}
	return -1;
}

static int
put(struct json *j, const char *s, size_t len)
{
	if (len && fwrite(s, 1, len, j->f) != len)
		return fail(j, "write error: %s", strerror(errno));
	return 0;
}

static int
putstr(struct json *j, const char *s)
{
	return put(j, s, strlen(s));
}

static int
newline(struct json *j)
{
	static const char spaces[] = "                                                                ";
	int n = j->depth * 2;

	if (!j->pretty)
		return 0;
	if (put(j, "\n", 1) < 0)
		return -1;
	for (; n > 0; n -= (int)sizeof(spaces) - 1)
		if (put(j, spaces, n < (int)sizeof(spaces) - 1 ? (size_t)n : sizeof(spaces) - 1) < 0)
			return -1;
	return 0;
}

/* Everything a value needs before its first byte: the comma and the indentation inside an
 * array; inside an object the key has done that already. */
static int
before_value(struct json *j)
{
	if (j->err[0])
		return -1;
	if (j->done)
		return fail(j, "value after the end of the document");
	if (j->depth > 0 && j->is_object[j->depth]) {
		if (!j->have_key)
			return fail(j, "object member without a key");
		j->have_key = 0;
		return 0;
	}
	if (j->depth > 0) {
		if (j->count[j->depth]++ && put(j, ",", 1) < 0)
			return -1;
		return newline(j);
	}
	return 0;
}

/* After a scalar or a closed container: at the top level, the document is complete. */
static int
after_value(struct json *j)
{
	if (j->depth == 0)
		j->done = 1;
	return j->err[0] ? -1 : 0;
}

static int
begin(struct json *j, int object)
{
	if (before_value(j) < 0)
		return -1;
	if (j->depth >= JSON_MAX_DEPTH)
		return fail(j, "nesting deeper than %d", JSON_MAX_DEPTH);
	j->depth++;
	j->is_object[j->depth] = (uint8_t)object;
	j->count[j->depth] = 0;
	return put(j, object ? "{" : "[", 1);
}

static int
end(struct json *j, int object)
{
	if (j->err[0])
		return -1;
	if (j->depth == 0 || j->is_object[j->depth] != object)
		return fail(j, "unbalanced %s end", object ? "object" : "array");
	if (j->have_key)
		return fail(j, "key without a value");
	j->depth--;
	if (j->count[j->depth + 1] && newline(j) < 0)
		return -1;
	if (put(j, object ? "}" : "]", 1) < 0)
		return -1;
	return after_value(j);
}

void
json_init(struct json *j, FILE *f, int pretty)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->pretty = pretty;
}

int json_object_begin(struct json *j) { return begin(j, 1); }
int json_object_end(struct json *j) { return end(j, 1); }
int json_array_begin(struct json *j) { return begin(j, 0); }
int json_array_end(struct json *j) { return end(j, 0); }

/*
 * Length of the valid UTF-8 sequence at s, or, when it is not valid, the negated length of
 * its maximal invalid subpart (at least 1), which becomes one U+FFFD: the substitution
 * Unicode recommends, so a cut multi-byte character costs one replacement, not several.
 */
static int
utf8_seq(const unsigned char *s, size_t len)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	int need, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		need = 1;
	else if (c >= 0xe0 && c <= 0xef)
		need = 2;
	else if (c >= 0xf0 && c <= 0xf4)
		need = 3;
	else
		return -1;
	if (c == 0xe0)
		lo = 0xa0;      /* overlong */
	else if (c == 0xed)
		hi = 0x9f;      /* UTF-16 surrogates */
	else if (c == 0xf0)
		lo = 0x90;      /* overlong */
	else if (c == 0xf4)
		hi = 0x8f;      /* beyond U+10FFFF */
	for (i = 1; i <= need; i++) {
		if ((size_t)i >= len || s[i] < lo || s[i] > hi)
			return -i;
		lo = 0x80;
		hi = 0xbf;
	}
	return need + 1;
}

static int
escape(struct json *j, const unsigned char *s, size_t len)
{
	char buf[8];
	size_t i = 0, run = 0; /* s[i - run, i) is pending plain text */
	int n;

	while (i < len) {
		unsigned char c = s[i];
		const char *rep = NULL;

		if (c == '"')
			rep = "\\\"";
		else if (c == '\\')
			rep = "\\\\";
		else if (c == '\n')
			rep = "\\n";
		else if (c == '\t')
			rep = "\\t";
		else if (c == '\r')
			rep = "\\r";
		else if (c == '\b')
			rep = "\\b";
		else if (c == '\f')
			rep = "\\f";
		else if (c < 0x20 || c == 0x7f) {
			snprintf(buf, sizeof(buf), "\\u%04x", c);
			rep = buf;
		}
		n = rep ? -1 : utf8_seq(s + i, len - i);
		if (n > 0) {
			i += (size_t)n;
			run += (size_t)n;
			continue;
		}
		if (put(j, (const char *)s + i - run, run) < 0)
			return -1;
		run = 0;
		if (putstr(j, rep ? rep : "\xef\xbf\xbd") < 0)
			return -1;
		i += rep ? 1 : (size_t)-n;
	}
	return put(j, (const char *)s + i - run, run);
}

int
json_key(struct json *j, const char *key)
{
	if (j->err[0])
		return -1;
	if (j->depth == 0 || !j->is_object[j->depth])
		return fail(j, "key outside an object");
	if (j->have_key)
		return fail(j, "key without a value");
	if (j->count[j->depth]++ && put(j, ",", 1) < 0)
		return -1;
	if (newline(j) < 0 || put(j, "\"", 1) < 0 ||
	    escape(j, (const unsigned char *)key, strlen(key)) < 0 ||
	    putstr(j, j->pretty ? "\": " : "\":") < 0)
		return -1;
	j->have_key = 1;
	return 0;
}

int
json_string_len(struct json *j, const char *s, size_t len)
{
	if (before_value(j) < 0 || put(j, "\"", 1) < 0 ||
	    escape(j, (const unsigned char *)s, len) < 0 || put(j, "\"", 1) < 0)
		return -1;
	return after_value(j);
}

int
json_str(struct json *j, const char *s)
{
	return s ? json_string_len(j, s, strlen(s)) : json_nil(j);
}

static int
raw_value(struct json *j, const char *text)
{
	if (before_value(j) < 0 || putstr(j, text) < 0)
		return -1;
	return after_value(j);
}

int
json_i64(struct json *j, int64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRId64, v);
	return raw_value(j, buf);
}

int
json_u64(struct json *j, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	return raw_value(j, buf);
}

/* The shortest of %.15g..%.17g that reads back as the same double: 0.1 stays "0.1". */
int
json_double(struct json *j, double v)
{
	char buf[32];
	int prec;

	if (!isfinite(v))
		return json_nil(j);
	for (prec = 15; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	return raw_value(j, buf);
}

int json_bool(struct json *j, bool v) { return raw_value(j, v ? "true" : "false"); }
int json_nil(struct json *j) { return raw_value(j, "null"); }

int
json_kstring(struct json *j, const char *key, const char *s)
{
	return json_key(j, key) < 0 ? -1 : json_str(j, s);
}

int
json_ku64(struct json *j, const char *key, uint64_t v)
{
	return json_key(j, key) < 0 ? -1 : json_u64(j, v);
}

int
json_ki64(struct json *j, const char *key, int64_t v)
{
	return json_key(j, key) < 0 ? -1 : json_i64(j, v);
}

int
json_kbool(struct json *j, const char *key, bool v)
{
	return json_key(j, key) < 0 ? -1 : json_bool(j, v);
}

int
json_knull(struct json *j, const char *key)
{
	return json_key(j, key) < 0 ? -1 : json_nil(j);
}

int
json_finish(struct json *j)
{
	if (j->err[0])
		return -1;
	if (!j->done)
		return fail(j, "incomplete document");
	if (put(j, "\n", 1) < 0)
		return -1;
	if (fflush(j->f) != 0 || ferror(j->f))
		return fail(j, "write error: %s", strerror(errno));
	return 0;
}
