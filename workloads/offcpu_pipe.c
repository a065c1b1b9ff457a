/*
 * offcpu_pipe: known off-CPU shapes for the off-CPU profile.
 *
 *   offcpu_pipe SECONDS half        thread "reader" alternates 10 ms computing (burn) with
 *                                   about 10 ms blocked in read() on a pipe (wait_reply),
 *                                   answered by thread "writer" after a 10 ms sleep
 *   offcpu_pipe SECONDS crowd N     N threads "crowd" that only compute: with more threads
 *                                   than CPUs, they wait in the run queue
 *   offcpu_pipe SECONDS yield N     N threads "yielder" that compute briefly and call
 *                                   sched_yield() in a loop: with more threads than CPUs,
 *                                   each yield hands the CPU to another
 *   offcpu_pipe SECONDS pingpong [CPU_PING CPU_PONG]
 *                                   threads "ping" and "pong" pass one byte back and forth
 *                                   over two pipes; prints "round_trips N per_second R".
 *                                   With two CPU numbers each thread is pinned to its own
 *                                   (the same number twice: both share that CPU), so the
 *                                   rate does not depend on where the scheduler puts them
 *   offcpu_pipe SECONDS cond        thread "waiter" waits on a condition variable
 *                                   (wait_signal) that thread "signaller" signals every
 *                                   10 ms: glibc's wait uses the frame-pointer register as a
 *                                   general one, so the kernel's frame-pointer walk ends at
 *                                   the leaf
 *   offcpu_pipe SECONDS late        thread "laggard" computes for 4 s, then sleeps until the
 *                                   end (rest); thread "sleeper" sleeps from the start: one
 *                                   running and one asleep when a recording starts at once,
 *                                   and both asleep after 4 s
 *   offcpu_pipe SECONDS herd N      N threads "herd" (up to 8192, 64 KiB stacks) that all
 *                                   wait on one condition variable (wait_herd) until the
 *                                   end: N stack copies wanted at once, for the limit of
 *                                   the off-CPU program's map of them
 *
 * With OFFCPU_PIPE_START=usr1 in the environment the process waits for SIGUSR1 before it
 * starts its threads (and its clock), so a tool can attach to the pid first, without the
 * exec of a stopped shell that would make it start over.
 *
 * SECONDS 0 runs until killed.  Hot functions are separate frames (WL_KEEP).
 */
#include <err.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
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

WL_KEEP static void *
yielder(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "yielder");
	while (!wl_expired(deadline)) {
		burn(10000);
		sched_yield();
	}
	return NULL;
}

static volatile uint64_t trips;
static int ping_cpu = -1, pong_cpu = -1;

/* Pins the calling thread; a failure is fatal, a benchmark on the wrong CPU is no result. */
static void
pin(int cpu)
{
	if (cpu < 0)
		return;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	int rc = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
	if (rc != 0)
		errx(1, "cannot pin to CPU %d: %s", cpu, strerror(rc));
}

static int
cpu_arg(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (end == s || *end != '\0' || v < 0 || v >= CPU_SETSIZE)
		errx(2, "bad CPU number '%s'", s);
	return (int)v;
}

WL_KEEP static void *
ping(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "ping");
	pin(ping_cpu);
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
	pin(pong_cpu);
	char c;
	while (read(req[0], &c, 1) == 1 && c != 'x')
		if (write(resp[1], &c, 1) != 1)
			err(1, "pong");
	return NULL;
}

static pthread_mutex_t cond_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static uint64_t signals, seen;
static int cond_done;

WL_KEEP static void
wait_signal(void)
{
	pthread_mutex_lock(&cond_mu);
	while (seen == signals && !cond_done)
		pthread_cond_wait(&cond, &cond_mu);
	seen = signals;
	pthread_mutex_unlock(&cond_mu);
}

WL_KEEP static void *
waiter(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "waiter");
	while (!cond_done)
		wait_signal();
	return NULL;
}

WL_KEEP static void *
signaller(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "signaller");
	struct timespec ten_ms = { 0, 10000000 };
	while (!wl_expired(deadline)) {
		nanosleep(&ten_ms, NULL);
		pthread_mutex_lock(&cond_mu);
		signals++;
		pthread_cond_signal(&cond);
		pthread_mutex_unlock(&cond_mu);
	}
	pthread_mutex_lock(&cond_mu);
	cond_done = 1;
	pthread_cond_signal(&cond);
	pthread_mutex_unlock(&cond_mu);
	return NULL;
}

/* One sleep until the deadline (SECONDS 0: for a day). */
WL_KEEP static void
rest(void)
{
	struct timespec until = { 0, 0 };
	uint64_t end = deadline ? deadline : wl_clock_ns(CLOCK_MONOTONIC) + 86400000000000ull;
	until.tv_sec = (time_t)(end / 1000000000u);
	until.tv_nsec = (long)(end % 1000000000u);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) != 0)
		;
}

WL_KEEP static void *
laggard(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "laggard");
	burn(4000000000ull);
	rest();
	return NULL;
}

WL_KEEP static void *
sleeper(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "sleeper");
	rest();
	return NULL;
}

static pthread_cond_t herd_cond = PTHREAD_COND_INITIALIZER;

WL_KEEP static void
wait_herd(void)
{
	pthread_mutex_lock(&cond_mu);
	while (!cond_done)
		pthread_cond_wait(&herd_cond, &cond_mu);
	pthread_mutex_unlock(&cond_mu);
}

WL_KEEP static void *
herd(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "herd");
	wait_herd();
	return NULL;
}

/* Thousands of threads: small stacks, and joined at the end, after one broadcast. */
static void
run_herd(int n)
{
	static pthread_t t[8192];
	pthread_attr_t attr;
	if (pthread_attr_init(&attr) != 0 || pthread_attr_setstacksize(&attr, 65536) != 0)
		errx(1, "pthread_attr");
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], &attr, herd, NULL) != 0)
			errx(1, "pthread_create: thread %d of %d", i + 1, n);
	struct timespec ms = { 0, 1000000 };
	while (!wl_expired(deadline))
		nanosleep(&ms, NULL);
	pthread_mutex_lock(&cond_mu);
	cond_done = 1;
	pthread_cond_broadcast(&herd_cond);
	pthread_mutex_unlock(&cond_mu);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("herd %d\n", n);
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
		errx(2, "usage: offcpu_pipe SECONDS half|crowd N|yield N|pingpong [CPU_PING CPU_PONG]|cond|"
			"late|herd N");
	const char *start = getenv("OFFCPU_PIPE_START");
	if (start && strcmp(start, "usr1") == 0) {
		sigset_t set;
		int sig;
		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
			err(1, "sigprocmask");
		/* From here on SIGUSR1 waits for us: the line says so to whoever sends it. */
		fprintf(stderr, "offcpu_pipe: waiting for SIGUSR1\n");
		if (sigwait(&set, &sig) != 0)
			err(1, "waiting for SIGUSR1");
	} else if (start && *start) {
		errx(2, "OFFCPU_PIPE_START: only 'usr1'");
	}
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
	} else if (strcmp(argv[2], "yield") == 0) {
		int n = argc > 3 ? atoi(argv[3]) : 0;
		if (n < 1 || n > 256)
			errx(2, "yield: 1 to 256 threads");
		for (int i = 0; i < n; i++)
			fn[i] = yielder;
		run(fn, n);
	} else if (strcmp(argv[2], "pingpong") == 0) {
		if (argc == 5) {
			ping_cpu = cpu_arg(argv[3]);
			pong_cpu = cpu_arg(argv[4]);
		} else if (argc != 3) {
			errx(2, "pingpong: no CPUs or two (CPU_PING CPU_PONG)");
		}
		uint64_t t0 = wl_clock_ns(CLOCK_MONOTONIC);
		fn[0] = ping;
		fn[1] = pong;
		run(fn, 2);
		double s = (double)(wl_clock_ns(CLOCK_MONOTONIC) - t0) / 1e9;
		printf("round_trips %llu per_second %.0f\n", (unsigned long long)trips,
		       (double)trips / s);
	} else if (strcmp(argv[2], "cond") == 0) {
		fn[0] = waiter;
		fn[1] = signaller;
		run(fn, 2);
	} else if (strcmp(argv[2], "late") == 0) {
		fn[0] = laggard;
		fn[1] = sleeper;
		run(fn, 2);
	} else if (strcmp(argv[2], "herd") == 0) {
		int n = argc > 3 ? atoi(argv[3]) : 0;
		if (n < 1 || n > 8192)
			errx(2, "herd: 1 to 8192 threads");
		run_herd(n);
	} else {
		errx(2, "unknown mode '%s'", argv[2]);
	}
	return 0;
}
