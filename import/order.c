/*
 * Time order for kernel records.  perf.data holds each CPU's ring buffer in turn, so a
 * sample can come before the MMAP it needs from another CPU; unwind applies mappings in
 * stream order, so import replays records by time, as perf's own ordered events do.
 * FINISHED_ROUND bounds the wait: after it, nothing older than the previous round's newest
 * event can follow.  Captures without rounds (old perf, simpleperf) wait until the buffer
 * holds ORDER_MAX_BYTES, then give up ordering for the oldest record rather than memory.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"

#define ORDER_MAX_BYTES (256u << 20)

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

static struct slot *
run_at(const struct run *r, size_t i)
{
	return &r->v[(r->head + i) & (r->cap - 1)];
}

static int
run_push(struct run *r, const struct slot *x)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 256;
		struct slot *v = malloc(cap * sizeof(*v));
		if (!v)
			return -1;
		for (size_t i = 0; i < r->n; i++)
			v[i] = *run_at(r, i);
		free(r->v);
		r->v = v;
		r->cap = cap;
		r->head = 0;
	}
	*run_at(r, r->n++) = *x;
	return 0;
}

static int
heap_push(struct order *o, const struct slot *x)
{
	struct slot *h = o->n < o->cap ? o->heap : reallocf_heap(o);
	if (!h)
		return -1;
	o->heap = h;
	size_t i = o->n++;
	while (i && before(x, &o->heap[(i - 1) / 2])) {
		o->heap[i] = o->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	o->heap[i] = *x;
	return 0;
}

static const struct slot *
head_of(const struct run *r)
{
	return &r->v[r->head];
}

/* Puts r, which has just gained its first record or lost its oldest, back in its place
 * among the live runs from position i on: records of a CPU come in blocks, so it
 * seldom moves far. */
static void
place(struct order *o, size_t i, struct run *r)
{
	while (i + 1 < o->nruns && before(head_of(o->live[i + 1]), head_of(r))) {
		o->live[i] = o->live[i + 1];
		i++;
	}
	o->live[i] = r;
}

/* A run that holds no records, for a new one. */
static struct run *
idle_run(struct order *o)
{
	for (size_t i = 0; i < ORDER_RUNS; i++)
		if (o->runs[i].n == 0)
			return &o->runs[i];
	return NULL;
}

/* Appends x to the run whose newest record is the latest one not after it, which keeps
 * each CPU's records together; a record older than every run starts a new one, or goes to
 * the heap when all are in use.  Every run stays sorted by (time, seq).  The run the
 * previous record extended is tried first: a CPU's block goes on there. */
static int
queue(struct order *o, const struct slot *x)
{
	struct run *best = o->fill;
	if (!best || !best->n || best->last > x->time) {
		best = NULL;
		for (size_t i = 0; i < o->nruns; i++) {
			struct run *r = o->live[i];
			if (r->last <= x->time && (!best || r->last > best->last))
				best = r;
		}
	}
	int fresh = !best && o->nruns < ORDER_RUNS;
	if (fresh)
		best = idle_run(o);
	if (!best)
		return heap_push(o, x);
	if (run_push(best, x) < 0)
		return -1;
	best->last = x->time;
	o->fill = best;
	if (fresh) {
		/* x is the newest record queued: it goes after every run at its time */
		size_t i = o->nruns++;
		for (; i && before(x, head_of(o->live[i - 1])); i--)
			o->live[i] = o->live[i - 1];
		o->live[i] = best;
	}
	return 0;
}

/* Takes the oldest record of the runs and the heap; 0 when there is none. */
static int
take_oldest(struct order *o, struct slot *out)
{
	struct run *r = o->nruns ? o->live[0] : NULL;
	if (o->n && (!r || before(&o->heap[0], head_of(r)))) {
		*out = o->heap[0];
		o->heap[0] = o->heap[--o->n];
		sift_down(o->heap, o->n, 0);
		return 1;
	}
	if (!r)
		return 0;
	*out = *head_of(r);
	r->head = (r->head + 1) & (r->cap - 1);
	if (--r->n) {
		place(o, 0, r);
		return 1;
	}
	o->nruns--;
	memmove(o->live, o->live + 1, o->nruns * sizeof(*o->live));
	return 1;
}

/* Whether a record at or before time is queued: the oldest is a run's first or the
 * heap's top. */
static int
due(const struct order *o, uint64_t time)
{
	return (o->nruns && head_of(o->live[0])->time <= time) ||
	       (o->n && o->heap[0].time <= time);
}

static int
pop(struct imp *m)
{
	struct order *o = &m->order;
	struct slot e;
	if (!take_oldest(o, &e))
		return 0;
	o->bytes -= e.size;
	int rc = records_handle(m, bo32(m->bo, e.rec), e.rec, e.size);
	if (e.copied)
		free((void *)e.rec);
	return rc;
}

int
order_push(struct imp *m, uint64_t time, const uint8_t *r, size_t size, uint64_t off)
{
	struct order *o = &m->order;
	struct slot x = { time, o->seq++, r, (uint32_t)size, 0 };
	/* A mapped capture (or one in memory) stays readable: the record is read in place
	 * when its turn comes (src_done only drops pages, which fault back in).  Decompressed
	 * and piped records are in buffers that move on: those are copied. */
	uintptr_t at = (uintptr_t)r, base = (uintptr_t)m->src.map;
	int stable = m->src.fd < 0 && at >= base && size <= m->src.size &&
		     at - base <= m->src.size - size;
	if (!stable) {
		uint8_t *copy = malloc(size ? size : 1);
		if (!copy)
			return imp_fail(m, off, "out of memory");
		memcpy(copy, r, size);
		x.rec = copy;
		x.copied = 1;
	}
	if (queue(o, &x) < 0) {
		if (x.copied)
			free((void *)x.rec);
		return imp_fail(m, off, "out of memory");
	}
	o->bytes += size; /* copied or not, so the bound is the same for every source */
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
	while (due(&m->order, time))
		if (pop(m) < 0)
			return -1;
	return 0;
}

void
order_free(struct imp *m)
{
	for (size_t i = 0; i < m->order.n; i++)
		if (m->order.heap[i].copied)
			free((void *)m->order.heap[i].rec);
	for (size_t i = 0; i < ORDER_RUNS; i++) {
		struct run *r = &m->order.runs[i];
		for (size_t j = 0; j < r->n; j++)
			if (run_at(r, j)->copied)
				free((void *)run_at(r, j)->rec);
		free(r->v);
	}
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
