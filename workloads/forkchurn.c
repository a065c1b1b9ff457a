/*
 * forkchurn RATE COUNT [PROGRESS]: process churn, as a build system makes it.  Starts RATE
 * short-lived children a second (COUNT of them, 0: until killed), each a new image (this
 * program executed again as "forkchurn -child") that spends about 2 ms of CPU in
 * child_work and exits.  After every 100 children reaped it writes their number to the
 * file PROGRESS (replaced whole, so a reader never sees half a number); it prints
 * "children N" when done and exits 0.
 *
 * Stacks of the children (leaf first): child_spin <- child_work <- main.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

#define CHILD_NS 2000000 /* CPU each child spends */

WL_KEEP uint64_t child_spin(uint64_t x)
{
	for (int i = 0; i < 100000; i++)
		x = x * 6364136223846793005u + 1442695040888963407u;
	return x;
}

WL_KEEP uint64_t child_work(void)
{
	uint64_t end = wl_clock_ns(CLOCK_PROCESS_CPUTIME_ID) + CHILD_NS, x = 1;

	while (wl_clock_ns(CLOCK_PROCESS_CPUTIME_ID) < end)
		x = child_spin(x);
	return x;
}

static void progress(const char *path, unsigned long n)
{
	char tmp[4096], text[32];
	int fd, len;

	if (!path)
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	len = snprintf(text, sizeof(text), "%lu\n", n);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0)
		err(1, "cannot create '%s'", tmp);
	if (write(fd, text, (size_t)len) != len || close(fd) < 0 || rename(tmp, path) < 0)
		err(1, "cannot write '%s'", path);
}

/* Reaps what has ended; blocking, until no more than max children run. */
static unsigned long reap(unsigned long *running, unsigned long max)
{
	unsigned long n = 0;
	int st;

	while (*running > 0) {
		pid_t p = waitpid(-1, &st, *running > max ? 0 : WNOHANG);
		if (p == 0)
			break;
		if (p < 0) {
			if (errno == EINTR)
				continue;
			err(1, "waitpid");
		}
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			errx(1, "child %d failed", (int)p);
		(*running)--;
		n++;
	}
	return n;
}

int main(int argc, char **argv)
{
	unsigned long rate, count, started = 0, done = 0, running = 0, reported = 0;
	char *end;

	if (argc == 2 && strcmp(argv[1], "-child") == 0)
		return child_work() == 0; /* never 0: exits 0 */
	if (argc < 3 || argc > 4)
		errx(2, "usage: forkchurn RATE COUNT [PROGRESS]");
	rate = strtoul(argv[1], &end, 10);
	if (*end || rate < 1 || rate > 10000)
		errx(2, "bad rate '%s': want 1..10000", argv[1]);
	count = strtoul(argv[2], &end, 10);
	if (*end)
		errx(2, "bad count '%s'", argv[2]);
	const char *path = argc == 4 ? argv[3] : NULL;
	uint64_t next = wl_clock_ns(CLOCK_MONOTONIC), step = 1000000000u / rate;

	while (count == 0 || started < count) {
		pid_t p = fork();
		if (p < 0)
			err(1, "fork");
		if (p == 0) {
			execl("/proc/self/exe", argv[0], "-child", (char *)NULL);
			_exit(127);
		}
		started++;
		running++;
		next += step;
		struct timespec ts = { (time_t)(next / 1000000000u), (long)(next % 1000000000u) };
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		/* Never more than a second's worth at once: a slow machine falls behind instead. */
		done += reap(&running, rate);
		if (done / 100 != reported / 100) {
			progress(path, done);
			reported = done;
		}
	}
	done += reap(&running, 0);
	progress(path, done);
	printf("children %lu\n", done);
	return 0;
}
