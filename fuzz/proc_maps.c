/* libFuzzer target: collect's reader of /proc/PID/maps (procfs.c) on arbitrary text; the
 * file is the target's to shape (its mapped file names).  Every mapping handed on must
 * have a terminated path and only the permission bits the reader knows. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../collect/procfs.h"

static volatile size_t sink;

static int
on_map(const struct procmap *m, void *arg)
{
	size_t *n = arg;
	if (strnlen(m->path, sizeof(m->path)) == sizeof(m->path) ||
	    (m->prot & ~(uint32_t)(PROT_READ | PROT_WRITE | PROT_EXEC)) ||
	    (m->flags != MAP_SHARED && m->flags != MAP_PRIVATE))
		abort();
	sink += m->end - m->start + m->pgoff + strlen(m->path);
	return ++*n >= 100000; /* the caller may stop the walk */
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t n = 0;
	if (size == 0)
		return 0;
	FILE *f = fmemopen((void *)data, size, "r");
	if (!f)
		return 0;
	(void)procfs_maps_file(f, on_map, &n);
	fclose(f);
	return 0;
}
