/* The processes of the machine at the start of record --host (host.h). */
#include "host.h"

#include <dirent.h>
#include <err.h>
#include <stdlib.h>

#include "procfs.h"

size_t
host_each_process(void (*fn)(void *arg, pid_t pid), void *arg)
{
	struct tidlist pids = { 0 };
	size_t over = 0;
	DIR *d = opendir("/proc");
	if (!d)
		err(1, "cannot list /proc");
	/* Listed first, handed out after: reading a process's maps while /proc is open for
	 * listing would hold the directory across thousands of reads. */
	for (struct dirent *e; (e = readdir(d));) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 0)
			continue;
		if (pids.n >= HOST_MAX_PROCESSES)
			over++;
		else if (tidlist_add(&pids, (pid_t)pid) < 0)
			errx(1, "out of memory");
	}
	closedir(d);
	for (size_t i = 0; i < pids.n; i++)
		fn(arg, pids.v[i]);
	tidlist_free(&pids);
	return over;
}
