#include "pb.h"

#include <stdlib.h>
#include <string.h>

void
pb_init(struct pb *b)
{
	memset(b, 0, sizeof(*b));
}

void
pb_reset(struct pb *b)
{
	b->len = 0;
	b->failed = 0;
}

void
pb_release(struct pb *b)
{
	free(b->buf);
	pb_init(b);
}

int
pb_failed(const struct pb *b)
{
	return b->failed;
}

/* Makes room for n more bytes; 0 or -1 (and failed set). */
static int
pb_reserve(struct pb *b, size_t n)
{
	size_t cap;
	uint8_t *p;

	if (b->failed)
		return -1;
	if (b->cap - b->len >= n)
		return 0;
	cap = b->cap ? b->cap : 256;
	while (cap - b->len < n) {
		if (cap > SIZE_MAX / 2)
			goto fail;
		cap *= 2;
	}
	if (!(p = realloc(b->buf, cap)))
		goto fail;
	b->buf = p;
	b->cap = cap;
	return 0;
fail:
	b->failed = 1;
	return -1;
}

size_t
pb_varint_size(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static size_t
put_varint(uint8_t *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

void
pb_varint(struct pb *b, uint64_t v)
{
	if (pb_reserve(b, 10) == 0)
		b->len += put_varint(b->buf + b->len, v);
}

void
pb_raw(struct pb *b, const void *p, size_t n)
{
	if (n && pb_reserve(b, n) == 0) {
		memcpy(b->buf + b->len, p, n);
		b->len += n;
	}
}

void
pb_tag(struct pb *b, uint32_t field, enum pb_wire wire)
{
	pb_varint(b, (uint64_t)field << 3 | wire);
}

void
pb_uint(struct pb *b, uint32_t field, uint64_t v)
{
	pb_tag(b, field, PB_VARINT);
	pb_varint(b, v);
}

void
pb_int(struct pb *b, uint32_t field, int64_t v)
{
	pb_uint(b, field, (uint64_t)v);
}

void
pb_uint_opt(struct pb *b, uint32_t field, uint64_t v)
{
	if (v)
		pb_uint(b, field, v);
}

void
pb_bytes(struct pb *b, uint32_t field, const void *p, size_t n)
{
	pb_tag(b, field, PB_LEN);
	pb_varint(b, n);
	pb_raw(b, p, n);
}

size_t
pb_open(struct pb *b, uint32_t field)
{
	pb_tag(b, field, PB_LEN);
	if (pb_reserve(b, 1) == 0)
		b->buf[b->len++] = 0;
	return b->len;
}

void
pb_close(struct pb *b, size_t mark)
{
	size_t body, extra;

	if (b->failed || mark == 0 || mark > b->len)
		return;
	body = b->len - mark;
	extra = pb_varint_size(body) - 1;
	if (extra) {
		if (pb_reserve(b, extra) < 0)
			return;
		memmove(b->buf + mark + extra, b->buf + mark, body);
		b->len += extra;
	}
	put_varint(b->buf + mark - 1, body);
}
