/*
 * stallfsync: an LD_PRELOAD library for the tests.  In the process whose name
 * (/proc/self/comm) is $RP_STALL_STAGE, an fsync of a temporary output file (".tmp-" in its
 * path) writes the process id to $RP_STALL_PIDFILE and never returns: the test then knows
 * that a temporary file exists and kills the stage while it holds it.  Every other fsync,
 * and every other process, is left alone.  Not part of the product.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int
is_stage(void)
{
	const char *want = getenv("RP_STALL_STAGE");
	char comm[64] = "";
	int fd;
	ssize_t n;

	if (!want || (fd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, comm, sizeof(comm) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	comm[n] = '\0';
	comm[strcspn(comm, "\n")] = '\0';
	return strcmp(comm, want) == 0;
}

int
fsync(int fd)
{
	static int (*real)(int);
	char link[64], path[4096];
	const char *pidfile = getenv("RP_STALL_PIDFILE");
	ssize_t n;

	if (!real)
		real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n > 0 && pidfile && is_stage()) {
		path[n] = '\0';
		if (strstr(path, ".tmp-")) {
			char tmp[4200];
			FILE *f;

			/* Renamed into place: the test never reads half a number. */
			snprintf(tmp, sizeof(tmp), "%s.new", pidfile);
			if ((f = fopen(tmp, "w"))) {
				fprintf(f, "%d\n", (int)getpid());
				if (fclose(f) == 0)
					rename(tmp, pidfile);
			}
			for (;;)
				pause();
		}
	}
	return real(fd);
}
