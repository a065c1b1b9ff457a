/* unwind/keysort and unwind/runsort: both give what a stable sort with the whole comparison
 * gives (glibc's qsort is a stable merge sort), on keys that are spread wide or narrow,
 * sorted, reversed, all equal, and with ties the tie-break decides. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../unwind/keysort.h"
#include "../../unwind/runsort.h"
#include "check.h"

struct el {			/* no padding: elements compare with memcmp */
	uint32_t tag;		/* its place in the input: tells a stable order from another */
	int32_t prio;		/* the tie-break: higher first */
	uint64_t key;
};

static int tie(const void *a, const void *b)
{
	return ((const struct el *)a)->prio > ((const struct el *)b)->prio;
}

static int less(const void *a, const void *b)
{
	const struct el *x = a, *y = b;

	return x->key != y->key ? x->key < y->key : tie(a, b);
}

/* The reference: a stable insertion sort with the whole comparison. */
static void reference(struct el *v, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct el h = v[i];
		size_t j = i;
		for (; j > 0 && less(&h, &v[j - 1]); j--)
			v[j] = v[j - 1];
		v[j] = h;
	}
}

static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

enum shape { RANDOM, SORTED, REVERSED, EQUAL };

static void fill(struct el *v, size_t n, uint64_t base, uint64_t range, enum shape s)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t k = s == SORTED ? i / 3 : s == REVERSED ? n - i / 3 : s == EQUAL ? 7
									     : next() % range;
		v[i] = (struct el){ .tag = (uint32_t)i, .key = base + k, .prio = (int32_t)(next() % 3) };
	}
}

static void one(size_t n, uint64_t base, uint64_t range, enum shape s)
{
	struct el *in = malloc(n * sizeof(*in) + 1), *want = malloc(n * sizeof(*in) + 1),
		  *got = malloc(n * sizeof(*in) + 1);

	fill(in, n, base, range, s);
	memcpy(want, in, n * sizeof(*in));
	reference(want, n);
	memcpy(got, in, n * sizeof(*in));
	CHECK(key_sort(got, n, sizeof(*got), offsetof(struct el, key), tie) == 0);
	CHECK(memcmp(got, want, n * sizeof(*in)) == 0);
	memcpy(got, in, n * sizeof(*in));
	run_sort(got, n, sizeof(*got), less);
	CHECK(memcmp(got, want, n * sizeof(*in)) == 0);
	free(in);
	free(want);
	free(got);
}

int main(void)
{
	static const size_t sizes[] = { 0, 1, 2, 3, 17, 1000, 5000 };
	static const uint64_t ranges[] = { 1, 2, 100, 1u << 21, 1ull << 40, UINT64_MAX };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		for (size_t r = 0; r < sizeof(ranges) / sizeof(ranges[0]); r++) {
			one(sizes[i], 0x7f0000000000ull, ranges[r], RANDOM);
			one(sizes[i], 0, ranges[r], RANDOM);
		}
		one(sizes[i], 0x400000, 0, SORTED);
		one(sizes[i], 0x400000, 0, REVERSED);
		one(sizes[i], UINT64_MAX - 100, 0, EQUAL);
	}
	/* Keys that differ only in their top bit: every pass up to bit 63 runs. */
	struct el v[2] = { { 0, 0, 1ull << 63 }, { 1, 0, 0 } };
	CHECK(key_sort(v, 2, sizeof(v[0]), offsetof(struct el, key), NULL) == 0);
	CHECK(v[0].tag == 1 && v[1].tag == 0);
	printf("sort: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
