/*
 * cpu_split [SECONDS]: a thread named "rp-worker" burns CPU in hot_a, hot_b and hot_c in a
 * 60/30/10 split of its own CPU time, so a profile has three known shares.
 *
 * Stacks (leaf first): hot_x <- dispatch <- run_worker <- start_thread.  The split is by the
 * thread's CPU clock, not wall time, so it stays exact when the thread is preempted; each
 * slice's overshoot is carried into the next cycle so the long-run shares are exact too.
 * The main thread only waits in pthread_join.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "common.h"

#define CYCLE_NS 10000000u	/* 10 ms of thread CPU per cycle: 6 + 3 + 1 ms */
#define CHUNK 80000		/* ~200 us of arithmetic per clock read (~0.75 us each) */

volatile uint64_t sink;		/* keeps the arithmetic alive */

static uint64_t cpu_ns(void)
{
	return wl_clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

/*
 * The hot functions spin until the thread has used budget_ns of CPU and return what they
 * really used.  They call cpu_ns(), so they are not leaves and keep their frame; the
 * bodies differ so no pass can fold them into one symbol.
 */
WL_KEEP int64_t hot_a(int64_t budget_ns)
{
	uint64_t start = cpu_ns(), now, x = sink;

	do {
		for (int i = 0; i < CHUNK; i++)
			x = x * 6364136223846793005u + 1442695040888963407u;
		sink = x;
		now = cpu_ns();
	} while ((int64_t)(now - start) < budget_ns);
	return (int64_t)(now - start);
}

WL_KEEP int64_t hot_b(int64_t budget_ns)
{
	uint64_t start = cpu_ns(), now, x = sink;

	do {
		for (int i = 0; i < CHUNK; i++)
			x = x * 2862933555777941757u + 3037000493u;
		sink = x;
		now = cpu_ns();
	} while ((int64_t)(now - start) < budget_ns);
	return (int64_t)(now - start);
}

WL_KEEP int64_t hot_c(int64_t budget_ns)
{
	uint64_t start = cpu_ns(), now, x = sink;

	do {
		for (int i = 0; i < CHUNK; i++)
			x = x * 3202034522624059733u + 1u;
		sink = x;
		now = cpu_ns();
	} while ((int64_t)(now - start) < budget_ns);
	return (int64_t)(now - start);
}

/*
 * One cycle: each function gets its share minus what it overshot last time.  The cycle's
 * length varies pseudo-randomly between 0.5 and 1.5 times CYCLE_NS so that no sampling
 * frequency can fall into step with it and see one function more often than its share.
 */
WL_KEEP void dispatch(int64_t debt[3])
{
	static const int64_t tenths[3] = { 6, 3, 1 };
	static uint32_t rng = 2463534242u;
	int64_t (*const fn[3])(int64_t) = { hot_a, hot_b, hot_c };

	rng ^= rng << 13;
	rng ^= rng >> 17;
	rng ^= rng << 5;
	int64_t cycle = CYCLE_NS / 2 + (int64_t)(rng % CYCLE_NS);
	for (int i = 0; i < 3; i++) {
		int64_t want = cycle * tenths[i] / 10 - debt[i];

		debt[i] = fn[i](want) - want;
	}
}

WL_KEEP void *run_worker(void *arg)
{
	uint64_t deadline = *(uint64_t *)arg;
	int64_t debt[3] = { 0, 0, 0 };

	/* Named by itself before any work, so every sample of it carries the name. */
	pthread_setname_np(pthread_self(), "rp-worker");
	while (!wl_expired(deadline))
		dispatch(debt);
	return NULL;
}

int main(int argc, char **argv)
{
	uint64_t deadline = wl_deadline(argc, argv);
	pthread_t t;
	int e;

	if ((e = pthread_create(&t, NULL, run_worker, &deadline)) != 0)
		errx(1, "cannot create the worker thread: %s", strerror(e));
	pthread_join(t, NULL);
	return 0;
}
