#include "rawbuf.h"

#include <err.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"

static void
le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static uint32_t
rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

void
rawbuf_put(struct rawbuf *b, uint32_t type, const void *payload, uint32_t len)
{
	if (grow_array((void **)&b->p, &b->cap, b->len, (size_t)len + 8, 1) < 0)
		errx(1, "out of memory");
	le32(b->p + b->len, type);
	le32(b->p + b->len + 4, len);
	if (len)
		memcpy(b->p + b->len + 8, payload, len);
	b->len += (size_t)len + 8;
}

int
rawbuf_next(const struct rawbuf *b, size_t *off, struct frame *f)
{
	if (*off + 8 > b->len)
		return 0;
	f->type = rd32(b->p + *off);
	f->len = rd32(b->p + *off + 4);
	f->data = b->p + *off + 8;
	*off += (size_t)f->len + 8;
	return 1;
}

void
rawbuf_free(struct rawbuf *b)
{
	free(b->p);
	*b = (struct rawbuf){ 0 };
}
