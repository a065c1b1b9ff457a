/*
 * Time order for kernel records.  perf.data holds each CPU's ring buffer in turn, so a
 * sample can come before the MMAP it needs from another CPU; unwind applies mappings in
 * stream order, so import replays records by time, as perf's own ordered events do.
 * FINISHED_ROUND bounds the wait: after it, nothing older than the previous round's newest
 * event can follow.  Captures without rounds (old perf, simpleperf) wait until the buffer
 * holds ORDER_MAX_BYTES, then give up ordering for the oldest record rather than memory.
 */
#include <stdlib.h>
#include <string.h>

#include "import.h"

#define ORDER_MAX_BYTES (256u << 20)

struct held {
	uint64_t off;
	size_t size;
	uint8_t data[];
};

static int
before(const struct slot *a, const struct slot *b)
{
	return a->time != b->time ? a->time < b->time : a->seq < b->seq;
}

static void
sift_down(struct slot *h, size_t n, size_t i)
{
	struct slot x = h[i];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, min = l;
		if (l >= n)
			break;
		if (r < n && before(&h[r], &h[l]))
			min = r;
		if (!before(&h[min], &x))
			break;
		h[i] = h[min];
		i = min;
	}
	h[i] = x;
}

static int
pop(struct imp *m)
{
	struct order *o = &m->order;
	struct held *e = o->heap[0].e;
	o->heap[0] = o->heap[--o->n];
	sift_down(o->heap, o->n, 0);
	o->bytes -= e->size;
	int rc = records_handle(m, bo32(m->bo, e->data), e->data, e->size, e->off);
	free(e);
	return rc;
}

int
order_push(struct imp *m, uint64_t time, const uint8_t *r, size_t size, uint64_t off)
{
	struct order *o = &m->order;
	struct held *e = malloc(sizeof(*e) + size);
	struct slot *h = o->n < o->cap ? o->heap : reallocf_heap(o);
	if (!e || !h) {
		free(e);
		return imp_fail(m, off, "out of memory");
	}
	o->heap = h;
	*e = (struct held){ off, size };
	memcpy(e->data, r, size);
	struct slot x = { time, o->seq++, e };
	size_t i = o->n++;
	while (i && before(&x, &o->heap[(i - 1) / 2])) {
		o->heap[i] = o->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	o->heap[i] = x;
	o->bytes += size;
	if (time > o->newest)
		o->newest = time;
	while (o->bytes > ORDER_MAX_BYTES)
		if (pop(m) < 0)
			return -1;
	return 0;
}

int
order_release(struct imp *m, uint64_t time)
{
	while (m->order.n && m->order.heap[0].time <= time)
		if (pop(m) < 0)
			return -1;
	return 0;
}

void
order_free(struct imp *m)
{
	for (size_t i = 0; i < m->order.n; i++)
		free(m->order.heap[i].e);
	free(m->order.heap);
	memset(&m->order, 0, sizeof(m->order));
}

struct slot *
reallocf_heap(struct order *o)
{
	size_t cap = o->cap ? 2 * o->cap : 1024;
	struct slot *h = realloc(o->heap, cap * sizeof(*h));
	if (!h)
		return NULL;
	o->cap = cap;
	return h;
}
