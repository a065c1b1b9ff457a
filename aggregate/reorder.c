#include "reorder.h"

#include <stdlib.h>
#include <string.h>

int
reorder_init(struct reorder *r, size_t max)
{
	memset(r, 0, sizeof(*r));
	r->max = max;
	r->cap = max < 1024 ? max + 1 : 1024;
	r->heap = malloc(r->cap * sizeof(*r->heap));
	return r->heap ? 0 : -1;
}

static void
swap(struct pending **a, struct pending **b)
{
	struct pending *t = *a;
	*a = *b;
	*b = t;
}

int
reorder_push(struct reorder *r, uint64_t time, const uint8_t *data, uint32_t len)
{
	if (r->n == r->cap) {
		size_t cap = r->cap * 2;
		struct pending **h = realloc(r->heap, cap * sizeof(*h));
		if (!h)
			return -1;
		r->heap = h;
		r->cap = cap;
	}
	struct pending *p = malloc(sizeof(*p) + len);
	if (!p)
		return -1;
	p->time = time;
	p->len = len;
	memcpy(p->data, data, len);
	size_t i = r->n++;
	r->heap[i] = p;
	while (i > 0 && r->heap[(i - 1) / 2]->time > r->heap[i]->time) {
		swap(&r->heap[(i - 1) / 2], &r->heap[i]);
		i = (i - 1) / 2;
	}
	if (r->n > r->peak)
		r->peak = r->n;
	return 0;
}

const struct pending *
reorder_peek(const struct reorder *r)
{
	return r->n ? r->heap[0] : NULL;
}

struct pending *
reorder_pop(struct reorder *r)
{
	if (!r->n)
		return NULL;
	struct pending *top = r->heap[0];
	r->heap[0] = r->heap[--r->n];
	size_t i = 0;
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		if (l < r->n && r->heap[l]->time < r->heap[m]->time)
			m = l;
		if (l + 1 < r->n && r->heap[l + 1]->time < r->heap[m]->time)
			m = l + 1;
		if (m == i)
			break;
		swap(&r->heap[i], &r->heap[m]);
		i = m;
	}
	return top;
}

void
reorder_release(struct reorder *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->heap[i]);
	free(r->heap);
	r->heap = NULL;
	r->n = 0;
}
