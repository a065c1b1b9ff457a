/* Checks made before anything is opened; each failure is one fatal line naming the check. */
#ifndef COLLECT_PREFLIGHT_H
#define COLLECT_PREFLIGHT_H

#include <sys/utsname.h>

#include "opts.h"

/* Targets with more threads are refused, whatever --max-threads says. */
#define PREFLIGHT_MAX_THREADS 1024

struct preflight {
	char release[sizeof(((struct utsname *)0)->release)];
	int e_machine;          /* the target's, equal to ours */
	int nthreads;
};

void preflight_run(const struct collect_opts *o, struct preflight *pf);

#endif
