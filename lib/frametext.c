/*
 * Frames as lines of text (frametext.h), by the rows of the frame table: printing walks the
 * decoded struct field by field, packing fills one from the words of a line and encodes it
 * with the same codec the stages use.
 */
#include "frametext.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "frametab.h"

#define MAX_WORDS 1024
#define MAX_PACKED 4 /* packed arrays in one row: off-CPU spans, stack-top words, a stack */
#define MAX_FIELDS 64

static int
fail(char *err, size_t errlen, const char *fmt, const char *what)
{
	snprintf(err, errlen, fmt, what);
	return -1;
}

/* ---- words ---- */

static int
plain_byte(unsigned char c)
{
	return c > ' ' && c < 0x7f && !strchr("\\#,:=\"", c);
}

static void
print_escaped(FILE *out, const char *p, size_t n)
{
	if (n == 0)
		fputs("\"\"", out);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];
		if (plain_byte(c))
			putc(c, out);
		else
			fprintf(out, "\\x%02x", c);
	}
}

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* An escaped word as its bytes, in place: the length ("" is empty). */
static size_t
unescape(char *s)
{
	char *o = s;

	if (!strcmp(s, "\"\""))
		return 0;
	for (const char *p = s; *p;) {
		if (p[0] == '\\' && p[1] == 'x' && hexval(p[2]) >= 0 && hexval(p[3]) >= 0) {
			*o++ = (char)(hexval(p[2]) << 4 | hexval(p[3]));
			p += 4;
		} else if (p[0] == '\\' && p[1] == '\\') {
			*o++ = '\\';
			p += 2;
		} else {
			*o++ = *p++;
		}
	}
	return (size_t)(o - s);
}

void
stream_hex_print(FILE *out, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%02x", p[i]);
}

long
stream_hex_parse(const char *s, uint8_t *out, size_t cap)
{
	size_t n = 0;

	for (; *s; s++) {
		if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
			continue;
		if (hexval(s[0]) < 0 || hexval(s[1]) < 0 || n == cap)
			return -1;
		out[n++] = (uint8_t)(hexval(s[0]) << 4 | hexval(s[1]));
		s++;
	}
	return (long)n;
}

/* Splits line at blanks, in place, up to a word that starts with '#': the number of words. */
static int
split_words(char *line, char **words)
{
	int n = 0;

	for (char *p = line; *p;) {
		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			*p++ = '\0';
		if (!*p || *p == '#' || n == MAX_WORDS)
			break;
		words[n++] = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
			p++;
	}
	return n;
}

/* ---- printing ---- */

static uint64_t
scalar_of(const struct frame_field *fl, const void *v)
{
	return stream_member_get(v, stream_field_member(fl));
}

/* The count member of an array whose length says it: left out of the text. */
static int
derived(const struct frame_desc *d, const struct frame_field *fl)
{
	for (size_t i = 0; i < d->nfields; i++) {
		const struct frame_field *a = &d->fields[i];
		if ((a->kind == FK_ARRAY || a->kind == FK_PACKED) && a->count == COUNT_A &&
		    a->a.off == fl->off)
			return 1;
	}
	return 0;
}

static int
is_scalar(uint8_t kind)
{
	return kind >= FK_U8 && kind <= FK_I32;
}

static void
print_scalar(FILE *out, const struct frame_field *fl, const void *v)
{
	uint64_t x = scalar_of(fl, v);

	if (fl->kind == FK_I32)
		fprintf(out, "%d", (int32_t)(uint32_t)x);
	else
		fprintf(out, fl->hex ? "0x%llx" : "%llu", (unsigned long long)x);
}

static void
print_bid(FILE *out, uint8_t len, const uint8_t *id)
{
	if (len == 0)
		fputs("\"\"", out);
	stream_hex_print(out, id, len);
}

/* A record's fields, split by ':'. */
static void
print_record(FILE *out, const struct frame_field *fl, const void *el)
{
	for (uint8_t k = 0; k < fl->nsub; k++) {
		const struct frame_field *sub = &fl->sub[k];
		struct str s;
		if (k)
			putc(':', out);
		if (sub->kind == FK_STR) {
			memcpy(&s, (const char *)el + sub->off, sizeof(s));
			print_escaped(out, s.p, s.len);
		} else {
			print_scalar(out, sub, el);
		}
	}
}

static void
print_array(FILE *out, const struct frame_field *fl, const void *v)
{
	uint64_t n = stream_field_count(fl, v);
	const uint8_t *packed = NULL;
	union { uint8_t byte; uint32_t u32; uint64_t u64; struct fr_bid bid; uint8_t rec[64]; } el;

	if (fl->kind == FK_PACKED)
		memcpy(&packed, (const char *)v + fl->off, sizeof(packed));
	if (fl->elem == FK_U8) {
		stream_hex_print(out, packed, n);
		return;
	}
	for (uint64_t i = 0; i < n; i++) {
		const void *e = (const char *)v + fl->off + i * fl->stride;
		if (i)
			putc(',', out);
		if (packed) {
			stream_elem_get(fl, packed, i, &el);
			e = &el;
		}
		switch (fl->elem) {
		case FK_U32: fprintf(out, "%u", *(const uint32_t *)e); break;
		case FK_U64:
			fprintf(out, fl->hex ? "0x%llx" : "%llu",
				(unsigned long long)*(const uint64_t *)e);
			break;
		case FK_BID: print_bid(out, el.bid.len, el.bid.id); break;
		default: print_record(out, fl, e); break;
		}
	}
}

/* A field at its default is left out: it packs back the same. */
static int
shown(const struct frame_desc *d, const struct frame_field *fl, const void *v)
{
	struct str s;
	uint64_t x;

	switch (fl->kind) {
	case FK_STR:
		memcpy(&s, (const char *)v + fl->off, sizeof(s));
		return s.len > 0;
	case FK_BID:
		return *((const uint8_t *)v + fl->len_off) > 0;
	case FK_ARRAY:
	case FK_PACKED:
		return stream_field_count(fl, v) > 0;
	default:
		if (!is_scalar(fl->kind))
			return 0;
		x = scalar_of(fl, v);
		return x != 0 && x != fl->dflt && !derived(d, fl);
	}
}

static void
print_fields(FILE *out, const struct frame_desc *d, const void *v)
{
	struct str s;

	fputs(d->name, out);
	for (size_t i = 0; i < d->nfields; i++) {
		const struct frame_field *fl = &d->fields[i];
		if (!shown(d, fl, v))
			continue;
		fprintf(out, " %s=", fl->name);
		switch (fl->kind) {
		case FK_STR:
			memcpy(&s, (const char *)v + fl->off, sizeof(s));
			print_escaped(out, s.p, s.len);
			break;
		case FK_BID:
			print_bid(out, *((const uint8_t *)v + fl->len_off),
				  (const uint8_t *)v + fl->off);
			break;
		case FK_ARRAY:
		case FK_PACKED:
			print_array(out, fl, v);
			break;
		default:
			print_scalar(out, fl, v);
		}
	}
}

static void
print_raw(FILE *out, const struct frame *f)
{
	fprintf(out, "raw %u ", f->type);
	stream_hex_print(out, f->data, f->len);
}

/* ---- packing ---- */

struct parsed {
	const struct frame_desc *desc; /* NULL: a raw frame */
	union stream_any_frame v;
	int given[MAX_FIELDS];         /* set by the line */
	uint64_t elems[MAX_FIELDS];    /* arrays: the elements the line gave */
	uint8_t *packed[MAX_PACKED];   /* owned buffers of packed arrays */
	int npacked;
	uint32_t raw_type;
	uint8_t *raw;
	uint32_t raw_len;
};

static void
parsed_release(struct parsed *ps)
{
	for (int i = 0; i < ps->npacked; i++)
		free(ps->packed[i]);
	free(ps->raw);
	ps->npacked = 0;
	ps->raw = NULL;
}

static int
parse_number(const char *s, const struct frame_field *fl, uint64_t *x)
{
	static const uint64_t max[] = { [FK_U8] = UINT8_MAX, [FK_U16] = UINT16_MAX,
					[FK_U32] = UINT32_MAX, [FK_U64] = UINT64_MAX };
	char *end;

	errno = 0;
	if (fl->kind == FK_I32) {
		long long y = strtoll(s, &end, 0);
		if (y < INT32_MIN || y > INT32_MAX)
			return -1;
		*x = (uint32_t)(int32_t)y;
	} else {
		if (*s == '-')
			return -1;
		*x = strtoull(s, &end, 0);
		if (*x > max[fl->kind])
			return -1;
	}
	return errno || end == s || *end ? -1 : 0;
}

/* One scalar or string into the member of fl in struct v. */
static int
set_one(const struct frame_field *fl, char *word, void *v, char *err, size_t errlen)
{
	uint64_t x;
	struct str s;

	if (fl->kind == FK_STR) {
		size_t n = unescape(word);
		if (n > STREAM_MAX_STR)
			return fail(err, errlen, "%s: longer than a string may be", fl->name);
		s = (struct str){ word, (uint16_t)n };
		memcpy((char *)v + fl->off, &s, sizeof(s));
		return 0;
	}
	if (parse_number(word, fl, &x) < 0)
		return fail(err, errlen, "%s: not a number of its size", fl->name);
	stream_member_set(v, stream_field_member(fl), x);
	return 0;
}

static int
set_bid(char *word, uint8_t *len, uint8_t *id, const char *name, char *err, size_t errlen)
{
	long n = strcmp(word, "\"\"") ? stream_hex_parse(word, id, STREAM_BUILD_ID_MAX) : 0;

	if (n < 0)
		return fail(err, errlen, "%s: not a build id of 20 hex bytes at most", name);
	*len = (uint8_t)n;
	return 0;
}

/* Element i of array fl: a number, a build id or a record split by ':'. */
static int
set_elem(const struct frame_field *fl, char *word, void *el, char *err, size_t errlen)
{
	struct fr_bid *b = el;
	char *field = word;

	switch (fl->elem) {
	case FK_U32:
	case FK_U64: {
		struct frame_field one = { .kind = fl->elem, .name = fl->name };
		return set_one(&one, word, el, err, errlen);
	}
	case FK_BID:
		return set_bid(word, &b->len, b->id, fl->name, err, errlen);
	}
	for (uint8_t k = 0; k < fl->nsub; k++) {
		char *next = strchr(field, ':');
		if ((next != NULL) != (k + 1 < fl->nsub))
			return fail(err, errlen, "%s: a record of another number of fields",
				    fl->name);
		if (next)
			*next++ = '\0';
		if (set_one(&fl->sub[k], field, el, err, errlen) < 0)
			return -1;
		field = next;
	}
	return 0;
}

static int
keep_packed(struct parsed *ps, uint8_t *buf, const struct frame_field *fl)
{
	if (ps->npacked == MAX_PACKED) {
		free(buf);
		return -1;
	}
	ps->packed[ps->npacked++] = buf;
	memcpy((char *)&ps->v + fl->off, &buf, sizeof(buf));
	return 0;
}

/* An array's word: into the struct, or packed into a buffer the struct points at. */
static int
set_array(struct parsed *ps, size_t i, char *word, char *err, size_t errlen)
{
	const struct frame_field *fl = &ps->desc->fields[i];
	size_t n = 1;
	uint8_t *buf = NULL;

	if (fl->elem == FK_U8) {
		size_t len = strlen(word) / 2 + 1;
		if (!(buf = malloc(len)))
			return fail(err, errlen, "%s: out of memory", fl->name);
		long got = stream_hex_parse(word, buf, len);
		ps->elems[i] = got < 0 ? 0 : (uint64_t)got;
		if (got < 0 || keep_packed(ps, buf, fl) < 0)
			return fail(err, errlen, "%s: not hex bytes", fl->name);
		return 0;
	}
	for (const char *p = word; *p; p++)
		n += *p == ',';
	if (n > fl->max)
		return fail(err, errlen, "%s: more elements than the frame may hold", fl->name);
	if (fl->kind == FK_PACKED &&
	    (!(buf = calloc(n, stream_elem_bytes(fl))) || keep_packed(ps, buf, fl) < 0))
		return fail(err, errlen, "%s: out of memory", fl->name);
	for (size_t k = 0; k < n; k++) {
		union { uint32_t u32; uint64_t u64; struct fr_bid bid; uint8_t rec[64]; } el;
		char *next = strchr(word, ',');
		if (next)
			*next++ = '\0';
		void *at = buf ? (void *)&el : (char *)&ps->v + fl->off + k * fl->stride;
		memset(&el, 0, sizeof(el));
		if (set_elem(fl, word, at, err, errlen) < 0)
			return -1;
		if (buf)
			stream_elem_put(fl, buf, k, &el);
		word = next;
	}
	ps->elems[i] = n;
	return 0;
}

static int
set_field(struct parsed *ps, size_t i, char *word, char *err, size_t errlen)
{
	const struct frame_field *fl = &ps->desc->fields[i];
	char *v = (char *)&ps->v;

	if (ps->given[i]++)
		return fail(err, errlen, "%s: given twice", fl->name);
	switch (fl->kind) {
	case FK_BID:
		return set_bid(word, (uint8_t *)v + fl->len_off, (uint8_t *)v + fl->off,
			       fl->name, err, errlen);
	case FK_ARRAY:
	case FK_PACKED:
		return set_array(ps, i, word, err, errlen);
	default:
		return set_one(fl, word, v, err, errlen);
	}
}

static size_t
field_at(const struct frame_desc *d, uint16_t off)
{
	size_t i = 0;
	while (i < d->nfields && !(is_scalar(d->fields[i].kind) && d->fields[i].off == off))
		i++;
	return i;
}

/* A packed array given fewer elements than its count (a crafted count) gets zeros up to
 * it, so the encoder never reads past the buffer. */
static int
fill_packed(struct parsed *ps, const struct frame_field *fl, uint64_t given, uint64_t n)
{
	size_t size = stream_elem_bytes(fl);
	uint8_t *old = NULL, *buf;
	int k = 0;

	if (fl->kind != FK_PACKED || n <= given || n > fl->max)
		return 0;
	memcpy(&old, (char *)&ps->v + fl->off, sizeof(old));
	while (old && ps->packed[k] != old)
		k++;
	if (!(buf = realloc(old, n * size)))
		return -1;
	memset(buf + given * size, 0, (n - given) * size);
	if (!old)
		return keep_packed(ps, buf, fl);
	ps->packed[k] = buf;
	memcpy((char *)&ps->v + fl->off, &buf, sizeof(buf));
	return 0;
}

/* The counts the line left out follow from the elements it gave; one it gave stands, so
 * that a line can say a count its elements do not fill (a crafted frame). */
static int
set_counts(struct parsed *ps, char *err, size_t errlen)
{
	const struct frame_desc *d = ps->desc;
	void *v = &ps->v;

	for (size_t i = 0; i < d->nfields; i++) {
		const struct frame_field *fl = &d->fields[i];
		if (fl->kind != FK_ARRAY && fl->kind != FK_PACKED)
			continue;
		size_t a = field_at(d, fl->a.off), b = field_at(d, fl->b.off);
		uint64_t len = ps->elems[i];
		if (fl->count != COUNT_SPANS && !ps->given[a])
			stream_member_set(v, fl->a, len - (fl->count == COUNT_SUM && ps->given[b] ?
							    stream_member_get(v, fl->b) : 0));
		if (fl->count == COUNT_SUM && !ps->given[b])
			stream_member_set(v, fl->b, len - stream_member_get(v, fl->a));
		if (fill_packed(ps, fl, len, stream_field_count(fl, v)) < 0)
			return fail(err, errlen, "%s: out of memory", fl->name);
	}
	return 0;
}

static int
valued(uint8_t kind)
{
	return is_scalar(kind) || kind == FK_STR || kind == FK_BID || kind == FK_ARRAY ||
	       kind == FK_PACKED;
}

/* Values without a name go to the fields in order, but for the counts their arrays say. */
static int
parse_fields(struct parsed *ps, char **words, int n, char *err, size_t errlen)
{
	const struct frame_desc *d = ps->desc;
	size_t next = 0;
	int named = 0;

	for (int w = 1; w < n; w++) {
		char *eq = strchr(words[w], '=');
		size_t i = 0;
		if (eq) {
			*eq = '\0';
			while (i < d->nfields && (!valued(d->fields[i].kind) ||
						  strcmp(d->fields[i].name, words[w])))
				i++;
			if (i == d->nfields)
				return fail(err, errlen, "%s: no such field", words[w]);
			named = 1;
		} else {
			if (named)
				return fail(err, errlen, "%s: a value after a named one", words[w]);
			while (next < d->nfields &&
			       (!valued(d->fields[next].kind) || derived(d, &d->fields[next])))
				next++;
			if (next == d->nfields)
				return fail(err, errlen, "%s: more values than fields", words[w]);
			i = next++;
		}
		if (set_field(ps, i, eq ? eq + 1 : words[w], err, errlen) < 0)
			return -1;
	}
	return set_counts(ps, err, errlen);
}

static int
parse_raw(struct parsed *ps, char **words, int n, char *err, size_t errlen)
{
	struct frame_field type = { .kind = FK_U32, .name = "type" };
	uint64_t t;
	size_t cap = 0;

	if (n < 2 || parse_number(words[1], &type, &t) < 0 || t == 0)
		return fail(err, errlen, "%s", "raw: no frame type");
	for (int w = 2; w < n; w++)
		cap += strlen(words[w]) / 2;
	if (!(ps->raw = malloc(cap + 1)))
		return fail(err, errlen, "%s", "raw: out of memory");
	ps->raw_type = (uint32_t)t;
	for (int w = 2; w < n; w++) {
		long got = stream_hex_parse(words[w], ps->raw + ps->raw_len, cap - ps->raw_len);
		if (got < 0)
			return fail(err, errlen, "%s", "raw: bad hex");
		ps->raw_len += (uint32_t)got;
	}
	return 1;
}

/* 1 parsed, 0 not a frame, -1 wrong. */
static int
parse_line(struct parsed *ps, char *line, char *err, size_t errlen)
{
	char *words[MAX_WORDS];
	int n = split_words(line, words);

	ps->desc = NULL;
	ps->npacked = 0;
	ps->raw = NULL;
	ps->raw_len = 0;
	if (n == 0)
		return 0;
	if (!strcmp(words[0], "raw"))
		return parse_raw(ps, words, n, err, errlen);
	for (uint32_t t = 0; t < stream_frame_types() && !ps->desc; t++)
		if (stream_frame_desc(t) && !strcmp(stream_frame_desc(t)->name, words[0]))
			ps->desc = stream_frame_desc(t);
	if (!ps->desc)
		return 0;
	memset(&ps->v, 0, sizeof(ps->v));
	memset(ps->given, 0, sizeof(ps->given));
	memset(ps->elems, 0, sizeof(ps->elems));
	return parse_fields(ps, words, n, err, errlen) < 0 ? -1 : 1;
}

/* The payload of a parsed line, encoded in w's scratch buffer (raw: its bytes). */
static const uint8_t *
encode(struct stream_writer *w, struct parsed *ps, uint32_t *type, uint32_t *len)
{
	if (!ps->desc) {
		*type = ps->raw_type;
		*len = ps->raw_len;
		return ps->raw;
	}
	*type = ps->desc->type;
	return stream_frame_encode(w, *type, &ps->v, len);
}

int
stream_frame_pack(struct stream_writer *w, char *line, char *err, size_t errlen)
{
	static struct parsed ps; /* large: one line at a time */
	uint32_t type, len;
	const uint8_t *p;
	int rc = parse_line(&ps, line, err, errlen);

	if (rc > 0 && (!(p = encode(w, &ps, &type, &len)) || stream_write(w, type, p, len) < 0))
		rc = fail(err, errlen, "%s", w->err);
	parsed_release(&ps);
	return rc;
}

/* Whether line packs into the bytes of f. */
static int
packs_back(const char *line, const struct frame *f)
{
	static struct parsed ps;
	static struct stream_writer scratch; /* its encoding buffer only */
	char err[200], *copy = strdup(line);
	uint32_t type, len;
	const uint8_t *p;
	int same = copy && parse_line(&ps, copy, err, sizeof(err)) > 0 &&
		   (p = encode(&scratch, &ps, &type, &len)) && type == f->type && len == f->len &&
		   !memcmp(p, f->data, len);

	parsed_release(&ps);
	free(copy);
	return same;
}

int
stream_frame_print(FILE *out, const struct frame *f)
{
	static union stream_any_frame v;
	const struct frame_desc *d = stream_frame_desc(f->type);
	char err[200], *line = NULL;
	size_t len = 0;
	FILE *m;

	if (d && stream_get_frame(f, &v, err, sizeof(err)) == 0 &&
	    (m = open_memstream(&line, &len))) {
		print_fields(m, d, &v);
		if (fclose(m) != 0 || !packs_back(line, f)) {
			free(line);
			line = NULL;
		}
	}
	if (line)
		fputs(line, out);
	else
		print_raw(out, f);
	putc('\n', out);
	free(line);
	return ferror(out) ? -1 : 0;
}
