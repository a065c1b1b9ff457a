/*
 * qsort_cb [SECONDS]: the hot path passes through libc: main -> sort_round -> qsort (libc)
 * -> compare_slowly (this program).  Unwinding it needs the program's and libc's unwind
 * tables.  Built -O2 -fomit-frame-pointer.
 */
#include <stdint.h>
#include <stdlib.h>

#include "common.h"

#define N 4096

static uint32_t items[N];
volatile uint64_t sink;

WL_KEEP int compare_slowly(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint64_t h = x;

	for (int i = 0; i < 64; i++)
		h = h * 6364136223846793005u + y;
	sink += h;
	return (x > y) - (x < y);
}

WL_KEEP void sort_round(uint32_t seed)
{
	for (int i = 0; i < N; i++) {
		seed = seed * 1103515245u + 12345u;
		items[i] = seed;
	}
	qsort(items, N, sizeof(items[0]), compare_slowly);
}

int main(int argc, char **argv)
{
	uint64_t deadline = wl_deadline(argc, argv);
	uint32_t seed = 1;

	do
		sort_round(seed++);
	while (!wl_expired(deadline) && deadline);
	return 0;
}
