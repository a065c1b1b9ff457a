/* Held ring records (held.h). */
#include "held.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"

#define HELD_CUT (1ull << 63)

void
held_add(struct held *h, const void *data, size_t n, size_t cut_to)
{
	uint64_t mark = 0;
	if (h->len + n > h->max && cut_to && cut_to < n) {
		n = cut_to;
		h->cut++;
		mark = HELD_CUT;
	}
	size_t need = sizeof(uint64_t) + ((n + 7) & ~(size_t)7);
	void *arr = h->buf;
	if (grow_array(&arr, &h->cap, h->len, need, 1) < 0) {
		h->failed++;
		return;
	}
	h->buf = arr;
	uint64_t l = n | mark;
	memcpy(h->buf + h->len, &l, sizeof(l));
	memcpy(h->buf + h->len + sizeof(l), data, n);
	h->len += need;
}

int
held_next(struct held *h, uint64_t until, const void **data, size_t *n, int *was_cut)
{
	if (h->at + 2 * sizeof(uint64_t) > h->len)
		return 0;
	const unsigned char *at = h->buf + h->at;
	uint64_t w, t;
	memcpy(&w, at, sizeof(w));
	memcpy(&t, at + sizeof(w), sizeof(t));
	if (t > until)
		return 0;
	*n = (size_t)(w & ~HELD_CUT);
	*was_cut = (w & HELD_CUT) != 0;
	*data = at + sizeof(w);
	h->at += sizeof(w) + ((*n + 7) & ~(size_t)7);
	return 1;
}

void
held_free(struct held *h)
{
	free(h->buf);
	size_t max = h->max;
	*h = (struct held){ .max = max };
}
