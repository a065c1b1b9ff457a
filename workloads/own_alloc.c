/*
 * own_alloc [SECONDS]: a program with its own allocator and no allocator symbol at all
 * (tests/heap.bats): a bump arena carved out of one static buffer, linked statically and
 * stripped, so neither a mapped libc nor the executable names malloc, calloc, realloc or
 * free.  Heap profiling must refuse it with the reason, or go on CPU-only with
 * --allow-partial.
 */
#include <stddef.h>
#include <stdint.h>

#include "common.h"

static unsigned char arena[1 << 20];
static size_t used;

WL_KEEP static void *
arena_take(size_t n)
{
	if (used + n > sizeof(arena))
		used = 0;
	void *p = arena + used;
	used += (n + 15) & ~(size_t)15;
	return p;
}

WL_KEEP static uint64_t
work(void)
{
	uint64_t x = 0;
	for (int i = 0; i < 100000; i++) {
		unsigned char *p = arena_take((size_t)(i % 512) + 1);
		p[0] = (unsigned char)i;
		x += p[0];
	}
	return x;
}

int
main(int argc, char **argv)
{
	uint64_t deadline = wl_deadline(argc, argv), x = 0;
	while (!wl_expired(deadline))
		x += work();
	return x == 1; /* 0 */
}
