/*
 * offcpu_pipe: known off-CPU shapes for the off-CPU profile.
 *
 *   offcpu_pipe SECONDS half        thread "reader" alternates 10 ms computing (burn) with
 *                                   about 10 ms blocked in read() on a pipe (wait_reply),
 *                                   answered by thread "writer" after a 10 ms sleep
 *   offcpu_pipe SECONDS crowd N     N threads "crowd" that only compute: with more threads
 *                                   than CPUs, they wait in the run queue
 *   offcpu_pipe SECONDS pingpong    threads "ping" and "pong" pass one byte back and forth
 *                                   over two pipes; prints "round_trips N per_second R"
 *
 * SECONDS 0 runs until killed.  Hot functions are separate frames (WL_KEEP).
 */
#include <err.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

static uint64_t deadline;
static int req[2], resp[2];
static volatile uint64_t sink;

/* Wall-clock time, so that the on/off split holds on a busy machine too: waiting for a CPU
 * during burn is run-queue time, not blocked time. */
WL_KEEP static void
burn(uint64_t ns)
{
	uint64_t end = wl_clock_ns(CLOCK_MONOTONIC) + ns, x = sink;
	while (wl_clock_ns(CLOCK_MONOTONIC) < end)
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink = x;
}

WL_KEEP static void
wait_reply(void)
{
	char c;
	if (read(resp[0], &c, 1) != 1)
		err(1, "read");
}

WL_KEEP static void *
reader(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "reader");
	while (!wl_expired(deadline)) {
		burn(10000000);
		if (write(req[1], "q", 1) != 1)
			err(1, "write");
		wait_reply();
	}
	if (write(req[1], "x", 1) != 1)
		err(1, "write");
	return NULL;
}

WL_KEEP static void *
writer(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "writer");
	struct timespec ten_ms = { 0, 10000000 };
	char c;
	while (read(req[0], &c, 1) == 1 && c == 'q') {
		nanosleep(&ten_ms, NULL);
		if (write(resp[1], "r", 1) != 1)
			err(1, "write");
	}
	return NULL;
}

WL_KEEP static void *
crowd(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "crowd");
	while (!wl_expired(deadline))
		burn(1000000);
	return NULL;
}

static volatile uint64_t trips;

WL_KEEP static void *
ping(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "ping");
	char c = 'p';
	uint64_t n = 0;
	while (!wl_expired(deadline)) {
		if (write(req[1], &c, 1) != 1 || read(resp[0], &c, 1) != 1)
			err(1, "ping");
		n++;
	}
	c = 'x';
	if (write(req[1], &c, 1) != 1)
		err(1, "ping");
	trips = n;
	return NULL;
}

WL_KEEP static void *
pong(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "pong");
	char c;
	while (read(req[0], &c, 1) == 1 && c != 'x')
		if (write(resp[1], &c, 1) != 1)
			err(1, "pong");
	return NULL;
}

static void
run(void *(*fn[])(void *), int n)
{
	pthread_t t[256];
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, fn[i], NULL) != 0)
			errx(1, "pthread_create");
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
}

int
main(int argc, char **argv)
{
	if (argc < 3)
		errx(2, "usage: offcpu_pipe SECONDS half|crowd N|pingpong");
	deadline = wl_deadline(2, argv);
	if (pipe(req) < 0 || pipe(resp) < 0)
		err(1, "pipe");
	void *(*fn[256])(void *);
	if (strcmp(argv[2], "half") == 0) {
		fn[0] = reader;
		fn[1] = writer;
		run(fn, 2);
	} else if (strcmp(argv[2], "crowd") == 0) {
		int n = argc > 3 ? atoi(argv[3]) : 0;
		if (n < 1 || n > 256)
			errx(2, "crowd: 1 to 256 threads");
		for (int i = 0; i < n; i++)
			fn[i] = crowd;
		run(fn, n);
	} else if (strcmp(argv[2], "pingpong") == 0) {
		uint64_t t0 = wl_clock_ns(CLOCK_MONOTONIC);
		fn[0] = ping;
		fn[1] = pong;
		run(fn, 2);
		double s = (double)(wl_clock_ns(CLOCK_MONOTONIC) - t0) / 1e9;
		printf("round_trips %llu per_second %.0f\n", (unsigned long long)trips,
		       (double)trips / s);
	} else {
		errx(2, "unknown mode '%s'", argv[2]);
	}
	return 0;
}
