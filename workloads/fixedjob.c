/*
 * fixedjob [ROUNDS]: a fixed single-threaded CPU job, ~3 s on the reference machine with the
 * default ROUNDS (300), then exits 0.  The overhead benchmark times it bare and under
 * profilers; the work never depends on time, so any slowdown is the profiler's.
 * Prints the checksum, which only depends on ROUNDS, and the job's own wall time, which the
 * benchmark reads to separate the target's slowdown from profiler start-up and wrap-up.
 *
 * Stacks (leaf first): job_round <- job_run <- main.
 */
#include <stdio.h>

#include "common.h"

#define ROUND_ITERS 7000000	/* ~10 ms of dependent multiply-adds per round */

/* Not a leaf (it calls fold) so it keeps its frame pointer under GCC 12. */
WL_KEEP uint64_t fold(uint64_t acc, uint64_t x)
{
	return acc ^ (x >> 17);
}

WL_KEEP uint64_t job_round(uint64_t seed)
{
	uint64_t x = seed;

	for (int i = 0; i < ROUND_ITERS; i++)
		x = x * 6364136223846793005u + 1442695040888963407u;
	return fold(seed, x);
}

WL_KEEP uint64_t job_run(long rounds)
{
	uint64_t acc = 1;

	for (long r = 0; r < rounds; r++)
		acc = job_round(acc + (uint64_t)r);
	return acc;
}

int main(int argc, char **argv)
{
	long rounds = 300;
	uint64_t start, sum;
	char *end;

	if (argc > 1) {
		rounds = strtol(argv[1], &end, 10);
		if (end == argv[1] || *end != '\0' || rounds < 1 || rounds > 1000000)
			errx(2, "bad round count '%s': want 1..1000000", argv[1]);
	}
	start = wl_clock_ns(CLOCK_MONOTONIC);
	sum = job_run(rounds);
	printf("fixedjob: %ld rounds, checksum %016llx, elapsed %.6f s\n", rounds,
	       (unsigned long long)sum, (double)(wl_clock_ns(CLOCK_MONOTONIC) - start) / 1e9);
	return 0;
}
