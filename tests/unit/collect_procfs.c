/*
 * collect's /proc readers on files the target shapes: a maps line with a short permission
 * field, and a mapped path that names a FIFO (opening it must not wait for a writer).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../collect/procfs.h"

#include "check.h"

struct got {
	int n;
	struct procmap m[4];
};

static int
keep(const struct procmap *m, void *arg)
{
	struct got *g = arg;
	if (g->n < 4)
		g->m[g->n] = *m;
	g->n++;
	return 0;
}

static void
test_maps_lines(void)
{
	static const char text[] =
		"00400000-00452000 r-xp 00000000 08:02 173521      /usr/bin/dbus-daemon\n"
		"00651000-00652000 r 00051000 08:02 173521 /x\n"
		"garbage\n"
		"7fff0000-7fff1000 rw-s 00000000 00:00 0\n";
	struct got g = { 0 };
	FILE *f = fmemopen((void *)text, sizeof(text) - 1, "r");
	CHECK(f && procfs_maps_file(f, keep, &g) == 0);
	fclose(f);
	CHECK(g.n == 3);
	CHECK(g.m[0].prot == (PROT_READ | PROT_EXEC) && g.m[0].flags == MAP_PRIVATE);
	CHECK(strcmp(g.m[0].path, "/usr/bin/dbus-daemon") == 0 && g.m[0].pgoff == 0);
	/* "r": readable, nothing else, private; the flags it lacks are not read. */
	CHECK(g.m[1].prot == PROT_READ && g.m[1].flags == MAP_PRIVATE);
	CHECK(strcmp(g.m[1].path, "/x") == 0 && g.m[1].pgoff == 0x51000);
	CHECK(g.m[2].prot == (PROT_READ | PROT_WRITE) && g.m[2].flags == MAP_SHARED);
	CHECK(g.m[2].path[0] == 0);
}

static void
test_open_fifo(void)
{
	char dir[] = "/tmp/collect_procfs_XXXXXX", fifo[64], file[64];
	CHECK(mkdtemp(dir) != NULL);
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	snprintf(file, sizeof(file), "%s/file", dir);
	CHECK(mkfifo(fifo, 0600) == 0);
	FILE *f = fopen(file, "w");
	CHECK(f && fclose(f) == 0);
	/* A test that hangs fails: the alarm ends it. */
	alarm(10);
	errno = 0;
	CHECK(procfs_open_mapping(getpid(), 1, 2, fifo) < 0 && errno == EINVAL);
	CHECK(procfs_open_mapping(getpid(), 1, 2, "/dev/zero") < 0);
	int fd = procfs_open_mapping(getpid(), 1, 2, file);
	CHECK(fd >= 0);
	alarm(0);
	if (fd >= 0)
		close(fd);
	unlink(fifo);
	unlink(file);
	rmdir(dir);
}

int
main(void)
{
	test_maps_lines();
	test_open_fifo();
	printf("collect_procfs: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
