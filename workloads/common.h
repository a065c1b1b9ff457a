/*
 * Helpers shared by the bundled workloads: the run time from argv[1] and clocks.
 *
 * Every workload takes an optional first argument, the run time in seconds (fractions
 * allowed); absent or 0 means run until killed.  They exit 0 when the time is up so a
 * test can tell "finished" from "crashed".
 */
#ifndef RP_WORKLOAD_COMMON_H
#define RP_WORKLOAD_COMMON_H

#include <err.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/*
 * Keeps a function a real, separately named frame: never inlined, and for GCC also out of
 * interprocedural passes (cloning, folding of identical bodies) that would rename it.
 */
#if defined(__clang__)
#define WL_KEEP __attribute__((noinline))
#else
#define WL_KEEP __attribute__((noinline, noipa))
#endif

static inline uint64_t wl_clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Returns the CLOCK_MONOTONIC deadline for argv[1] seconds, or 0 for "never". */
static inline uint64_t wl_deadline(int argc, char **argv)
{
	char *end;
	double s;

	if (argc < 2)
		return 0;
	s = strtod(argv[1], &end);
	if (end == argv[1] || *end != '\0' || !(s >= 0) || s > 1e6)
		errx(2, "bad run time '%s': want seconds, 0 for no limit", argv[1]);
	if (s == 0)
		return 0;
	return wl_clock_ns(CLOCK_MONOTONIC) + (uint64_t)(s * 1e9);
}

static inline int wl_expired(uint64_t deadline)
{
	return deadline != 0 && wl_clock_ns(CLOCK_MONOTONIC) >= deadline;
}

#endif
