/*
 * stallfsync: an LD_PRELOAD library for the tests.  In the process named $RP_STALL_STAGE,
 * an fsync of a temporary output file (".tmp-" in its path) writes the process id, one line,
 * to the file descriptor $RP_STALL_FD and never returns: the test then knows that a
 * temporary file exists and kills the stage while it holds it.  Every other fsync, and every
 * other process, is left alone.  The stages confine themselves (Landlock): the descriptor is
 * one the test opened, inherited, and the name is the program's own, not /proc/self/comm.
 * Not part of the product.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char *program_invocation_short_name;

int
fsync(int fd)
{
	static int (*real)(int);
	char link[64], path[4096], line[32];
	const char *want = getenv("RP_STALL_STAGE"), *out = getenv("RP_STALL_FD");
	ssize_t n;

	if (!real)
		real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n > 0 && want && out && strcmp(program_invocation_short_name, want) == 0) {
		path[n] = '\0';
		if (strstr(path, ".tmp-")) {
			int len = snprintf(line, sizeof(line), "%d\n", (int)getpid());
			/* One write: the test never reads half a number. */
			if (write(atoi(out), line, (size_t)len) != len)
				errno = EIO;
			for (;;)
				pause();
		}
	}
	return real(fd);
}
