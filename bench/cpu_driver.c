/* cpu_driver: runs a command and reports its wall time, CPU time and peak memory, to the
 * microsecond where GNU time gives hundredths (a unwind run of 20 ms is two of those).
 *
 * USAGE: cpu_driver -o FILE COMMAND [ARGS...]
 * Runs COMMAND with the same stdin, stdout and stderr, waits for it and writes one line to
 * FILE: "wall_s user_s sys_s maxrss_kb", its user and system time those of COMMAND and of
 * the descendants it waited for (as GNU time counts).  Exits with COMMAND's status (128+N
 * when killed by signal N; 127 when it cannot be run).
 *     $ cpu_driver -o t sleep 0.1 && cat t
 *     0.100912 0.000702 0.000000 1920
 */
#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double seconds(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
	const char *out = NULL;
	struct timespec t0, t1;
	struct rusage ru;
	int c, status;

	while ((c = getopt(argc, argv, "+o:h")) != -1) {
		if (c == 'o')
			out = optarg;
		else
			errx(c == 'h' ? 0 : 2, "usage: cpu_driver -o FILE COMMAND [ARGS...]");
	}
	if (!out || optind >= argc)
		errx(2, "usage: cpu_driver -o FILE COMMAND [ARGS...]");
	FILE *f = fopen(out, "we");
	if (!f)
		err(2, "%s", out);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid_t pid = fork();
	if (pid < 0)
		err(2, "fork");
	if (pid == 0) {
		execvp(argv[optind], argv + optind);
		warn("%s", argv[optind]);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) < 0)
		err(2, "wait4");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double wall = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	fprintf(f, "%.6f %.6f %.6f %ld\n", wall, seconds(ru.ru_utime), seconds(ru.ru_stime),
		ru.ru_maxrss);
	if (fclose(f) != 0)
		err(2, "%s", out);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
