#include "reorder.h"

#include <stdlib.h>
#include <string.h>

int
reorder_init(struct reorder *r, size_t max)
{
	memset(r, 0, sizeof(*r));
	r->max = max;
	r->fcap = 1024;
	r->hcap = 256;
	r->fifo = malloc(r->fcap * sizeof(*r->fifo));
	r->heap = malloc(r->hcap * sizeof(*r->heap));
	return r->fifo && r->heap ? 0 : -1;
}

static int
before(const struct reorder_slot *a, const struct reorder_slot *b)
{
	return a->time != b->time ? a->time < b->time : a->seq < b->seq;
}

static const struct reorder_slot *
fifo_at(const struct reorder *r, size_t i)
{
	return &r->fifo[(r->fhead + i) & (r->fcap - 1)];
}

static int
fifo_push(struct reorder *r, struct reorder_slot s)
{
	if (r->fn == r->fcap) {
		/* Unwrap into a ring twice the size. */
		size_t cap = r->fcap * 2;
		struct reorder_slot *f = malloc(cap * sizeof(*f));
		if (!f)
			return -1;
		for (size_t i = 0; i < r->fn; i++)
			f[i] = *fifo_at(r, i);
		free(r->fifo);
		r->fifo = f;
		r->fcap = cap;
		r->fhead = 0;
	}
	r->fifo[(r->fhead + r->fn++) & (r->fcap - 1)] = s;
	return 0;
}

static int
heap_push(struct reorder *r, struct reorder_slot s)
{
	if (r->hn == r->hcap) {
		size_t cap = r->hcap * 2;
		struct reorder_slot *h = realloc(r->heap, cap * sizeof(*h));
		if (!h)
			return -1;
		r->heap = h;
		r->hcap = cap;
	}
	size_t i = r->hn++;
	while (i > 0 && before(&s, &r->heap[(i - 1) / 2])) {
		r->heap[i] = r->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	r->heap[i] = s;
	return 0;
}

static struct pending *
heap_pop(struct reorder *r)
{
	struct pending *top = r->heap[0].p;
	struct reorder_slot x = r->heap[--r->hn];
	size_t i = 0, n = r->hn;
	for (;;) {
		size_t l = 2 * i + 1, m = l;
		if (l >= n)
			break;
		if (l + 1 < n && before(&r->heap[l + 1], &r->heap[l]))
			m = l + 1;
		if (!before(&r->heap[m], &x))
			break;
		r->heap[i] = r->heap[m];
		i = m;
	}
	if (n)
		r->heap[i] = x;
	return top;
}

static struct pending *
pending_alloc(struct reorder *r, uint32_t size)
{
	size_t c = size / REORDER_GRAIN + 1;
	struct pending *p;
	if (c < REORDER_CLASSES && (p = r->spare[c])) {
		memcpy(&r->spare[c], p->locs, sizeof(p));
		return p;
	}
	uint32_t cap = c < REORDER_CLASSES ? (uint32_t)(c * REORDER_GRAIN) : size;
	if (!(p = malloc(sizeof(*p) + cap)))
		return NULL;
	p->cap = cap;
	return p;
}

void
reorder_free(struct reorder *r, struct pending *p)
{
	size_t c = p ? p->cap / REORDER_GRAIN : REORDER_CLASSES;
	if (c == 0 || c >= REORDER_CLASSES || p->cap % REORDER_GRAIN) {
		free(p);
		return;
	}
	memcpy(p->locs, &r->spare[c], sizeof(p));
	r->spare[c] = p;
}

int
reorder_push(struct reorder *r, const struct stack_event *ev, const uint8_t *payload,
	     uint32_t len, struct pending **evicted)
{
	size_t nlocs = ev->nlocs * sizeof(uint32_t);
	struct pending *p = pending_alloc(r, (uint32_t)(nlocs + len));
	*evicted = NULL;
	if (!p)
		return -1;
	p->ev = *ev;
	p->ev.locs = p->locs;
	p->len = len;
	if (nlocs) /* an empty stack may have no array */
		memcpy(p->locs, ev->locs, nlocs);
	if (len)
		memcpy((uint8_t *)p->locs + nlocs, payload, len);
	uint64_t time = ev->time;
	/* Full: the oldest of the held events and the new one leaves instead of being held, so
	 * the buffer never holds more than max (ties go to the one that came first). */
	if (r->max && r->n >= r->max) {
		if (time < reorder_peek(r)->ev.time) {
			*evicted = p;
			return 0;
		}
		*evicted = reorder_pop(r);
	}
	struct reorder_slot s = { time, r->seq++, p };
	int in_order = r->fn == 0 || fifo_at(r, r->fn - 1)->time <= time;
	if ((in_order ? fifo_push(r, s) : heap_push(r, s)) < 0) {
		reorder_free(r, p);
		return -1;
	}
	r->n++;
	if (r->n > r->peak)
		r->peak = r->n;
	return 0;
}

/* 1 when the FIFO's head is the oldest event, 0 when the heap's is; -1 when empty. */
static int
oldest_in_fifo(const struct reorder *r)
{
	if (!r->fn)
		return r->hn ? 0 : -1;
	return !r->hn || before(fifo_at(r, 0), &r->heap[0]);
}

const struct pending *
reorder_peek(const struct reorder *r)
{
	int f = oldest_in_fifo(r);
	return f < 0 ? NULL : f ? fifo_at(r, 0)->p : r->heap[0].p;
}

struct pending *
reorder_pop(struct reorder *r)
{
	int f = oldest_in_fifo(r);
	if (f < 0)
		return NULL;
	r->n--;
	if (!f)
		return heap_pop(r);
	struct pending *p = fifo_at(r, 0)->p;
	r->fhead = (r->fhead + 1) & (r->fcap - 1);
	r->fn--;
	return p;
}

void
reorder_release(struct reorder *r)
{
	for (size_t i = 0; i < r->fn; i++)
		free(fifo_at(r, i)->p);
	for (size_t i = 0; i < r->hn; i++)
		free(r->heap[i].p);
	for (size_t c = 0; c < REORDER_CLASSES; c++) {
		while (r->spare[c]) {
			struct pending *p = r->spare[c];
			memcpy(&r->spare[c], p->locs, sizeof(p));
			free(p);
		}
	}
	free(r->fifo);
	free(r->heap);
	r->fifo = r->heap = NULL;
	r->n = r->fn = r->hn = 0;
}
