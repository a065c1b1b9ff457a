#include "jslb.h"
#include "json.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- writing ---- */

void
jslb_init(struct jslb *b)
{
	memset(b, 0, sizeof(*b));
}

void
jslb_release(struct jslb *b)
{
	for (size_t i = 0; i < b->n; i++)
		free(b->slabs[i].data);
	free(b->slabs);
	jslb_init(b);
}

size_t
jslb_type_size(uint32_t type)
{
	static const uint8_t size[] = {
		[JSLB_I8] = 1, [JSLB_U8] = 1, [JSLB_I16] = 2, [JSLB_U16] = 2,
		[JSLB_I32] = 4, [JSLB_U32] = 4, [JSLB_F32] = 4, [JSLB_F64] = 8,
		[JSLB_I64] = 8, [JSLB_U64] = 8, [JSLB_JSON] = 1,
	};
	return type < sizeof(size) ? size[type] : 0;
}

/* A new slab of len bytes, uninitialised; NULL with b->err. */
static uint8_t *
add_slab(struct jslb *b, uint32_t type, size_t len, long *index)
{
	uint8_t *p;

	if (len > UINT32_MAX || b->n >= UINT32_MAX / JSLB_SLAB_ENTRY) {
		snprintf(b->err, sizeof(b->err), "slab too large for a jslb file");
		return NULL;
	}
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 16;
		struct jslb_slab *s = realloc(b->slabs, cap * sizeof(*s));
		if (!s)
			goto oom;
		b->slabs = s;
		b->cap = cap;
	}
	if (!(p = malloc(len ? len : 1)))
		goto oom;
	b->slabs[b->n] = (struct jslb_slab){ type, p, len };
	*index = (long)b->n++;
	return p;
oom:
	snprintf(b->err, sizeof(b->err), "out of memory");
	return NULL;
}

static void
put_le(uint8_t *p, uint64_t v, size_t size)
{
	for (size_t i = 0; i < size; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

long
jslb_add_json(struct jslb *b, const char *text, size_t len)
{
	long ix;
	uint8_t *p = add_slab(b, JSLB_JSON, len, &ix);

	if (!p)
		return -1;
	memcpy(p, text, len);
	return ix;
}

long
jslb_add_i32(struct jslb *b, const int32_t *v, size_t n)
{
	long ix;
	uint8_t *p = n > SIZE_MAX / 4 ? NULL : add_slab(b, JSLB_I32, 4 * n, &ix);

	if (!p)
		return -1;
	for (size_t i = 0; i < n; i++)
		put_le(p + 4 * i, (uint32_t)v[i], 4);
	return ix;
}

long
jslb_add_u8(struct jslb *b, const uint8_t *v, size_t n)
{
	long ix;
	uint8_t *p = add_slab(b, JSLB_U8, n, &ix);

	if (!p)
		return -1;
	memcpy(p, v, n);
	return ix;
}

long
jslb_add_f64(struct jslb *b, const double *v, size_t n)
{
	long ix;
	uint8_t *p = n > SIZE_MAX / 8 ? NULL : add_slab(b, JSLB_F64, 8 * n, &ix);

	if (!p)
		return -1;
	for (size_t i = 0; i < n; i++) {
		uint64_t bits;
		memcpy(&bits, &v[i], 8);
		put_le(p + 8 * i, bits, 8);
	}
	return ix;
}

static size_t
align_up(size_t off, size_t a)
{
	return (off + a - 1) / a * a;
}

int
jslb_write(struct jslb *b, int (*put)(void *ctx, const void *p, size_t n), void *ctx)
{
	static const uint8_t zeros[8];
	uint8_t head[JSLB_HEADER_SIZE], ent[JSLB_SLAB_ENTRY];
	size_t off = JSLB_HEADER_SIZE + JSLB_SLAB_ENTRY * b->n, pos, i;

	memcpy(head, JSLB_MAGIC, 8);
	put_le(head + 8, JSLB_VERSION, 4);
	put_le(head + 12, b->n, 4);
	put_le(head + 16, b->root, 4);
	if (put(ctx, head, sizeof(head)) < 0)
		goto fail;
	/* The table first: every offset is known before any slab byte is written. */
	for (i = 0; i < b->n; i++) {
		off = align_up(off, jslb_type_size(b->slabs[i].type));
		if (off + b->slabs[i].len > UINT32_MAX) {
			snprintf(b->err, sizeof(b->err), "profile too large for a jslb file");
			return -1;
		}
		put_le(ent, b->slabs[i].type, 4);
		put_le(ent + 4, off, 4);
		put_le(ent + 8, b->slabs[i].len, 4);
		if (put(ctx, ent, sizeof(ent)) < 0)
			goto fail;
		off += b->slabs[i].len;
	}
	pos = JSLB_HEADER_SIZE + JSLB_SLAB_ENTRY * b->n;
	for (i = 0; i < b->n; i++) {
		size_t start = align_up(pos, jslb_type_size(b->slabs[i].type));
		if ((start > pos && put(ctx, zeros, start - pos) < 0) ||
		    put(ctx, b->slabs[i].data, b->slabs[i].len) < 0)
			goto fail;
		pos = start + b->slabs[i].len;
	}
	return 0;
fail:
	snprintf(b->err, sizeof(b->err), "write failed");
	return -1;
}

/* ---- reading ---- */

struct dec {
	const uint8_t *buf;
	size_t len;
	uint32_t n;
	FILE *out;
	size_t written, max_out;
	char *err;
	size_t errlen;
};

static int
dfail(struct dec *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d->err, d->errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static uint64_t
get_le(const uint8_t *p, size_t size)
{
	uint64_t v = 0;

	for (size_t i = 0; i < size; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static void
slab_entry(const struct dec *d, uint32_t i, uint32_t *type, uint32_t *off, uint32_t *len)
{
	const uint8_t *e = d->buf + JSLB_HEADER_SIZE + (size_t)JSLB_SLAB_ENTRY * i;

	*type = (uint32_t)get_le(e, 4);
	*off = (uint32_t)get_le(e + 4, 4);
	*len = (uint32_t)get_le(e + 8, 4);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Each entry: a known type, aligned, inside the file after the table; spans gets
 * (offset << 32 | index) per slab for the overlap check. */
static int
check_entries(struct dec *d, size_t table_end, uint64_t *spans)
{
	uint32_t i, type, off, len;
	size_t size;

	for (i = 0; i < d->n; i++) {
		slab_entry(d, i, &type, &off, &len);
		if (!(size = jslb_type_size(type)))
			return dfail(d, "slab %u has unknown type %u", i, type);
		if (off % size || len % size)
			return dfail(d, "slab %u is not aligned to %zu bytes", i, size);
		if (off < table_end || off > d->len || len > d->len - off)
			return dfail(d, "slab %u lies outside the file", i);
		spans[i] = (uint64_t)off << 32 | i;
	}
	if (d->n)
		qsort(spans, d->n, sizeof(*spans), cmp_u64);
	for (i = 1; i < d->n; i++) {
		uint32_t a = (uint32_t)spans[i - 1], b = (uint32_t)spans[i];
		uint32_t ta, oa, la, tb, ob, lb;
		slab_entry(d, a, &ta, &oa, &la);
		slab_entry(d, b, &tb, &ob, &lb);
		if (la && lb && (uint64_t)oa + la > ob)
			return dfail(d, "slabs %u and %u overlap", a, b);
	}
	return 0;
}

/* Header and slab table; the root must be a JSON slab. */
static int
check_table(struct dec *d, uint32_t *root)
{
	uint64_t *spans;
	uint32_t type, off, len;
	size_t table_end;
	int rc;

	if (d->len < JSLB_HEADER_SIZE || memcmp(d->buf, JSLB_MAGIC, 8) != 0)
		return dfail(d, "not a jslb file (bad magic)");
	if (get_le(d->buf + 8, 4) != JSLB_VERSION)
		return dfail(d, "unsupported jslb version %" PRIu64, get_le(d->buf + 8, 4));
	d->n = (uint32_t)get_le(d->buf + 12, 4);
	*root = (uint32_t)get_le(d->buf + 16, 4);
	if (d->n > (d->len - JSLB_HEADER_SIZE) / JSLB_SLAB_ENTRY)
		return dfail(d, "slab table of %u entries passes the end of the file", d->n);
	if (*root >= d->n)
		return dfail(d, "root slab %u out of range", *root);
	table_end = JSLB_HEADER_SIZE + (size_t)JSLB_SLAB_ENTRY * d->n;
	if (!(spans = malloc((d->n ? d->n : 1) * sizeof(*spans))))
		return dfail(d, "out of memory");
	rc = check_entries(d, table_end, spans);
	free(spans);
	if (rc < 0)
		return -1;
	slab_entry(d, *root, &type, &off, &len);
	if (type != JSLB_JSON)
		return dfail(d, "root slab %u is not JSON", *root);
	return 0;
}

static int
emit(struct dec *d, const void *p, size_t n)
{
	if (n > d->max_out - d->written)
		return dfail(d, "decoded profile larger than %zu bytes", d->max_out);
	if (n && fwrite(p, 1, n, d->out) != n)
		return dfail(d, "write error");
	d->written += n;
	return 0;
}

/* One element of a typed slab as a JSON value, through lib/json so numbers look exactly
 * as the JSON writer prints them. */
static void
typed_value(struct json *j, uint32_t type, const uint8_t *p)
{
	uint64_t u = get_le(p, jslb_type_size(type));
	float f;
	double g;

	switch (type) {
	case JSLB_I8: json_i64(j, (int8_t)u); break;
	case JSLB_I16: json_i64(j, (int16_t)u); break;
	case JSLB_I32: json_i64(j, (int32_t)u); break;
	case JSLB_I64: json_i64(j, (int64_t)u); break;
	case JSLB_F32: {
		uint32_t w = (uint32_t)u;
		memcpy(&f, &w, 4);
		json_double(j, f);
		break;
	}
	case JSLB_F64: memcpy(&g, &u, 8); json_double(j, g); break;
	default: json_u64(j, u); break;
	}
}

/* Longest text of one element and its comma: a %.17g double. */
#define TYPED_MAX_CHARS 25

static int
typed_array(struct dec *d, uint32_t type, const uint8_t *p, uint32_t len)
{
	size_t size = jslb_type_size(type), count = len / size;
	struct json j;

	/* Counted at the worst case before writing, so the cap holds without a second pass. */
	if (d->max_out - d->written < 2 ||
	    count > (d->max_out - d->written - 2) / TYPED_MAX_CHARS)
		return dfail(d, "decoded profile larger than %zu bytes", d->max_out);
	d->written += 2 + count * TYPED_MAX_CHARS;
	json_init(&j, d->out, 0);
	json_array_begin(&j);
	for (size_t i = 0; i < count; i++)
		typed_value(&j, type, p + i * size);
	json_array_end(&j);
	if (j.err[0])
		return dfail(d, "%s", j.err);
	return 0;
}

static int slab_out(struct dec *d, uint32_t i, int depth);

static size_t
skip_ws(const char *s, size_t i, size_t n)
{
	while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
		i++;
	return i;
}

/* At s[i] == '{': the length of a placeholder {"$s": N} there and N, or 0. */
static size_t
placeholder(const char *s, size_t i, size_t n, uint64_t *slab)
{
	size_t k = skip_ws(s, i + 1, n), digits = 0;

	if (n - k < 4 || memcmp(s + k, "\"$s\"", 4) != 0)
		return 0;
	k = skip_ws(s, k + 4, n);
	if (k >= n || s[k] != ':')
		return 0;
	k = skip_ws(s, k + 1, n);
	for (*slab = 0; k < n && s[k] >= '0' && s[k] <= '9' && digits < 10; k++, digits++)
		*slab = *slab * 10 + (uint64_t)(s[k] - '0');
	if (!digits)
		return 0;
	k = skip_ws(s, k, n);
	return k < n && s[k] == '}' ? k + 1 - i : 0;
}

/* Copies JSON text, replacing each placeholder outside strings by its slab. */
static int
json_out(struct dec *d, const char *s, size_t n, int depth)
{
	size_t i = 0, run = 0, plen;
	int in_str = 0;
	uint64_t slab;

	for (; i < n; i++) {
		char c = s[i];
		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = 0;
			continue;
		}
		if (c == '"') {
			in_str = 1;
			continue;
		}
		if (c != '{' || !(plen = placeholder(s, i, n, &slab)))
			continue;
		if (emit(d, s + run, i - run) < 0)
			return -1;
		if (slab >= d->n)
			return dfail(d, "placeholder names slab %" PRIu64 " of %u", slab, d->n);
		if (slab_out(d, (uint32_t)slab, depth + 1) < 0)
			return -1;
		i += plen - 1;
		run = i + 1;
	}
	if (in_str)
		return dfail(d, "unterminated string in a JSON slab");
	return emit(d, s + run, n - run);
}

static int
slab_out(struct dec *d, uint32_t i, int depth)
{
	uint32_t type, off, len;

	if (depth > JSLB_MAX_DEPTH)
		return dfail(d, "JSON slabs nest deeper than %d", JSLB_MAX_DEPTH);
	slab_entry(d, i, &type, &off, &len);
	if (type == JSLB_JSON)
		return json_out(d, (const char *)d->buf + off, len, depth);
	return typed_array(d, type, d->buf + off, len);
}

int
jslb_decode(const uint8_t *buf, size_t len, FILE *out, size_t max_out, char *err,
	    size_t errlen)
{
	struct dec d = { .buf = buf, .len = len, .out = out, .max_out = max_out,
			 .err = err, .errlen = errlen };
	uint32_t root = 0;

	if (check_table(&d, &root) < 0)
		return -1;
	return slab_out(&d, root, 0);
}
