/*
 * heap_mix [SECONDS [ROUNDS_PER_SECOND [PROGRAM ARGS...]]]: known allocations through two
 * call paths, for the heap profile's estimates (tests/heap.bats).  With PROGRAM, it executes
 * PROGRAM at the end instead of exiting, its live set still allocated (the exec reset).
 *
 *   churn_alloc   allocates and frees at once, every round, one block of each of
 *                 16 B, 64 B, 256 B, 1 KiB, 4 KiB, 64 KiB, 256 KiB, 1 MiB and 4 MiB
 *                 (malloc, calloc, realloc growth, posix_memalign, aligned_alloc)
 *   keep_alloc    keeps a live set of LIVE_BYTES (16 B to 4 MiB blocks) from the start,
 *                 replacing a tenth of it (free, then the same size again) every round
 *   realloc_chain grows one block by realloc in steps, then frees it, every round
 *   free_unsampled frees memory of a path the test ignores (tiny blocks)
 *
 * ROUNDS_PER_SECOND (default 20) paces the rounds.  At exit it prints the truth on stdout:
 * "churn_bytes N", "churn_count N", "keep_bytes N" (allocated by keep_alloc, the initial
 * set included), "live_bytes N" (keep_alloc's live set).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

static const size_t churn_sizes[] = { 16, 64, 256, 1024, 4096, 65536, 262144, 1 << 20,
				      4 << 20 };
#define NCHURN (sizeof(churn_sizes) / sizeof(churn_sizes[0]))

/* The live set: counts of each size. */
static const struct { size_t size, n; } live_spec[] = {
	{ 16, 2000 }, { 256, 1000 }, { 4096, 500 }, { 65536, 64 }, { 1 << 20, 16 },
	{ 4 << 20, 4 },
};
#define NSPEC (sizeof(live_spec) / sizeof(live_spec[0]))

static void **live;
static size_t *live_size, nlive;
static unsigned long long churn_bytes, churn_count, keep_bytes, live_bytes;
static volatile unsigned char sink;

static void
touch(void *p)
{
	if (!p)
		err(1, "out of memory");
	sink ^= *(volatile unsigned char *)p;
}

/* One of each churn size, through each of the allocator's entry points. */
WL_KEEP static void
churn_alloc(unsigned round)
{
	for (size_t i = 0; i < NCHURN; i++) {
		size_t n = churn_sizes[i];
		void *p;
		switch ((round + i) % 4) {
		case 0:
			p = malloc(n);
			break;
		case 1:
			p = calloc(1, n);
			break;
		case 2:
			if (posix_memalign(&p, 64, n) != 0)
				p = NULL;
			break;
		default:
			p = aligned_alloc(64, n);
			break;
		}
		touch(p);
		free(p);
		churn_bytes += n;
		churn_count++;
	}
}

WL_KEEP static void *
keep_alloc(size_t n)
{
	void *p = malloc(n);
	touch(p);
	keep_bytes += n;
	return p;
}

/* A tenth of the live set, freed and allocated again at the same size. */
WL_KEEP static void
keep_replace(unsigned round)
{
	for (size_t k = 0; k < nlive / 10; k++) {
		size_t i = (round * (nlive / 10) + k) % nlive;
		free(live[i]);
		live[i] = keep_alloc(live_size[i]);
	}
}

/* realloc growth of one block that stays under its first stack, then a free. */
WL_KEEP static void
realloc_chain(void)
{
	void *p = malloc(1024);
	for (size_t n = 2048; n <= (2u << 20); n *= 2) {
		void *q = realloc(p, n);
		touch(q);
		p = q;
	}
	free(p);
}

/* Frees of blocks no probe is likely to have sampled, and of foreign pointers. */
WL_KEEP static void
free_unsampled(void)
{
	for (int i = 0; i < 64; i++) {
		void *p = malloc(8);
		touch(p);
		free(p);
	}
	free(NULL);
}

static void
setup_live(void)
{
	for (size_t s = 0; s < NSPEC; s++)
		nlive += live_spec[s].n;
	live = calloc(nlive, sizeof(*live));
	live_size = calloc(nlive, sizeof(*live_size));
	if (!live || !live_size)
		err(1, "out of memory");
	size_t i = 0;
	for (size_t s = 0; s < NSPEC; s++)
		for (size_t k = 0; k < live_spec[s].n; k++, i++) {
			live_size[i] = live_spec[s].size;
			live[i] = keep_alloc(live_size[i]);
			live_bytes += live_size[i];
		}
}

int
main(int argc, char **argv)
{
	uint64_t deadline = wl_deadline(argc, argv);
	unsigned rate = argc > 2 ? (unsigned)atoi(argv[2]) : 20;
	if (rate == 0)
		rate = 20;
	setup_live();
	uint64_t step = 1000000000ull / rate, next = wl_clock_ns(CLOCK_MONOTONIC);
	for (unsigned round = 0; !deadline || wl_clock_ns(CLOCK_MONOTONIC) < deadline; round++) {
		churn_alloc(round);
		keep_replace(round);
		realloc_chain();
		free_unsampled();
		next += step;
		uint64_t now = wl_clock_ns(CLOCK_MONOTONIC);
		if (next > now)
			usleep((useconds_t)((next - now) / 1000));
	}
	printf("churn_bytes %llu\nchurn_count %llu\nkeep_bytes %llu\nlive_bytes %llu\n",
	       churn_bytes, churn_count, keep_bytes, live_bytes);
	if (argc > 3) {
		fflush(stdout);
		execv(argv[3], argv + 3);
		err(1, "cannot execute '%s'", argv[3]);
	}
	return 0;
}
