/* Opening the sampling events on the target: its threads, launch's cgroup, or the CPUs. */
#ifndef COLLECT_ATTACH_H
#define COLLECT_ATTACH_H

#include <sys/types.h>

#include "emit.h"
#include "perf.h"

struct attach_spec {
	pid_t pid;              /* the target: every thread of it */
	unsigned max_threads;   /* --max-threads: events for at most that many threads */
	int cpus;               /* events on every CPU for every task instead: side-band only
				 * without a cpu profile, sampling too for --host */
	int cgroup_fd;          /* launch's cgroup scope: the cgroup's events instead, or -1 */
	const char *cgroup_path;
	int verbose;
	struct emit *out;       /* once the stream started: threads left out are a warning */
};

/* Opens the events of p (perf_set_init done) as a says; fatal on failure. */
void attach(struct perf_set *p, const struct attach_spec *a);

#endif
