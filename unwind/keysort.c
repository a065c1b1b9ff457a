/* keysort: radix sort of (key, position) pairs, then the elements moved once (keysort.h). */
#include "keysort.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DIGIT_BITS 11
#define DIGITS (1u << DIGIT_BITS)

struct kp {
	uint64_t key;
	size_t pos;
};

static uint64_t key_of(const char *base, size_t i, size_t sz, size_t koff)
{
	uint64_t k;

	memcpy(&k, base + i * sz + koff, sizeof(k));
	return k;
}

/* One stable counting pass over the digit at shift: from -> to. */
static void pass(const struct kp *from, struct kp *to, size_t n, unsigned shift, size_t *count)
{
	memset(count, 0, DIGITS * sizeof(*count));
	for (size_t i = 0; i < n; i++)
		count[(from[i].key >> shift) & (DIGITS - 1)]++;
	for (size_t d = 0, sum = 0; d < DIGITS; d++) {
		size_t c = count[d];
		count[d] = sum;
		sum += c;
	}
	for (size_t i = 0; i < n; i++)
		to[count[(from[i].key >> shift) & (DIGITS - 1)]++] = from[i];
}

/* Equal keys in [a, e) of v (elements of size sz) by tie, stably: insertion. */
static void order_ties(char *v, size_t sz, size_t a, size_t e, char *hold,
		       int (*tie)(const void *, const void *))
{
	for (size_t i = a + 1; i < e; i++) {
		size_t j = i;
		memcpy(hold, v + i * sz, sz);
		while (j > a && tie(hold, v + (j - 1) * sz)) {
			memcpy(v + j * sz, v + (j - 1) * sz, sz);
			j--;
		}
		if (j != i)
			memcpy(v + j * sz, hold, sz);
	}
}

int key_sort(void *base, size_t n, size_t sz, size_t koff, int (*tie)(const void *, const void *))
{
	char *v = base;
	struct kp *a, *b;
	size_t *count;
	char *tmp;
	uint64_t spread = 0;

	if (n < 2)
		return 0;
	a = malloc(n * sizeof(*a));
	b = malloc(n * sizeof(*b));
	count = malloc(DIGITS * sizeof(*count));
	tmp = malloc(n * sz + sz);	/* the moved elements, and one held by order_ties */
	if (!a || !b || !count || !tmp) {
		free(a);
		free(b);
		free(count);
		free(tmp);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		a[i] = (struct kp){ key_of(v, i, sz, koff), i };
		spread |= a[i].key ^ a[0].key;
	}
	/* Digits above the highest bit where keys differ are the same in all: no pass. */
	for (unsigned shift = 0; shift < 64 && (spread >> shift); shift += DIGIT_BITS) {
		pass(a, b, n, shift, count);
		struct kp *t = a;
		a = b;
		b = t;
	}
	for (size_t i = 0; i < n; i++)
		memcpy(tmp + i * sz, v + a[i].pos * sz, sz);
	memcpy(v, tmp, n * sz);
	for (size_t i = 0, j; tie && i < n; i = j) {
		for (j = i + 1; j < n && a[j].key == a[i].key; j++)
			;
		if (j - i > 1)
			order_ties(v, sz, i, j, tmp + n * sz, tie);
	}
	free(a);
	free(b);
	free(count);
	free(tmp);
	return 0;
}
