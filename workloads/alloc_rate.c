/*
 * alloc_rate SECONDS SPIN: small allocations as fast as SPIN lets (bench/heap.sh).  Each
 * call is malloc of 16 to 256 bytes, a touch, free, then SPIN iterations of arithmetic: SPIN
 * sets the allocation rate of a bare run (0: as fast as the allocator goes).  With
 * ALLOC_RATE_START=usr1 it waits for SIGUSR1 (a profiler attached) before its clock starts.
 * Prints "allocs N" and "rate R" (allocations per second) at the end.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

static volatile sig_atomic_t go;
static volatile unsigned char sink;

static void
on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

WL_KEEP static void
one(unsigned i, unsigned spin)
{
	unsigned char *p = malloc(16 + (i % 16) * 16);
	if (!p)
		err(1, "out of memory");
	p[0] = (unsigned char)i;
	sink ^= p[0];
	free(p);
	unsigned x = i;
	for (unsigned k = 0; k < spin; k++)
		x = x * 1103515245u + 12345u;
	sink ^= (unsigned char)x;
}

int
main(int argc, char **argv)
{
	if (argc < 3)
		errx(2, "usage: alloc_rate SECONDS SPIN");
	double secs = atof(argv[1]);
	unsigned spin = (unsigned)atoi(argv[2]);
	const char *start = getenv("ALLOC_RATE_START");
	if (start && strcmp(start, "usr1") == 0) {
		signal(SIGUSR1, on_usr1);
		fprintf(stderr, "waiting for SIGUSR1\n");
		while (!go)
			pause();
	}
	uint64_t t0 = wl_clock_ns(CLOCK_MONOTONIC), end = t0 + (uint64_t)(secs * 1e9), now;
	unsigned long long n = 0;
	do {
		for (unsigned i = 0; i < 1024; i++)
			one((unsigned)n + i, spin);
		n += 1024;
		now = wl_clock_ns(CLOCK_MONOTONIC);
	} while (now < end);
	printf("allocs %llu\nrate %.0f\n", n, (double)n / ((double)(now - t0) / 1e9));
	return 0;
}
