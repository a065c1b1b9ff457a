/*
 * Frames kept as bytes, as they travel between stages: u32 type, u32 length, payload, one
 * after another.  fanout queues windows for its branches and holds the main stream this way.
 */
#ifndef FANOUT_RAWBUF_H
#define FANOUT_RAWBUF_H

#include <stddef.h>
#include <stdint.h>

#include "stream.h"

struct rawbuf {
	uint8_t *p;
	size_t len, cap;
};

/* Appends one frame (exits on out of memory). */
void rawbuf_put(struct rawbuf *b, uint32_t type, const void *payload, uint32_t len);
/* The frame at *off, which then moves past it; 0 at the end.  f->data points into b. */
int rawbuf_next(const struct rawbuf *b, size_t *off, struct frame *f);
void rawbuf_free(struct rawbuf *b);

#endif
