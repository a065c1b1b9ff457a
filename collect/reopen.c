/*
 * Opening the sampling events, and the one sequence that changes them: write the FR_TARGET
 * that describes what follows (after a calibration, the records it kept), close what is
 * open, open the events in the mode chosen and write what exists already (mappings and names
 * produce no records of their own).  main runs it at the start; after that only the loop
 * does, when exec.c or fallback.c says so.
 */
#include <err.h>
#include <string.h>
#include <sys/resource.h>

#include "attach.h"
#include "collect.h"

/* One fd per (thread, CPU) event, plus slack for /proc files and module copies. */
static void
raise_nofile(int nthreads, int ncpu)
{
	struct rlimit rl;
	rlim_t need = (rlim_t)nthreads * (rlim_t)ncpu * 2 + 256;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= need)
		return;
	if (rl.rlim_max < need)
		rl.rlim_max = need;
	rl.rlim_cur = need;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		warn("cannot raise the open file limit to %llu", (unsigned long long)need);
}

void
events_open(struct collect *c, int layout, int nthreads)
{
	char why[256];
	/* Without a cpu profile the events only follow mappings, names and threads. */
	if (perf_set_init(&c->perf, c->o.no_cpu ? 0 : c->o.freq, layout, why, sizeof(why)) < 0)
		errx(1, "%s", why);
	perf_set_source(&c->perf, c->ev.cycles, c->o.cpuid.set ? &c->o.cpuid.cpus : NULL,
			c->o.host);
	raise_nofile(nthreads, c->perf.ncpu);
	scope_unfiltered(&c->scope, c->o.no_cpu); /* attach() then watches the CPUs */
	struct attach_spec a = {
		.pid = c->o.pid, .max_threads = c->o.max_threads,
		.cpus = c->o.no_cpu || c->o.host,
		.cgroup_fd = c->scope.cgroup ? c->scope.cg.fd : -1, .cgroup_path = c->scope.cg.path,
		.verbose = c->o.verbose, .out = c->run.started ? &c->out : NULL,
	};
	attach(&c->perf, &a);
}

/* The calibration is over: what existed when it began (a launched command's image was
 * mapped before its events opened; the target as remembered then), its records from the
 * start (an exec among them is handled by the loop as any other), and what its events still
 * hold, all in the mode chosen.  The few milliseconds until the new events are open are
 * the only ones not sampled. */
static void
after_calibration(struct collect *c)
{
	synth_existing(c);
	synth_snapshot_done(c);
	/* The runtimes' files as they are now, before the first of the kept samples. */
	jitcopy_before_sample(&c->jit);
	records_replay(c);
	for (size_t i = 0; i < c->perf.nrings; i++)
		perf_ring_read(&c->perf, &c->perf.rings[i], records_handle, c, 1);
	collect_heap_release(c, UINT64_MAX);
	collect_physical_release(c, UINT64_MAX);
}

void
reopen(struct collect *c, uint64_t since, int nthreads)
{
	synth_target(c, since);
	if (c->perf.layout == PERF_BOTH)
		after_calibration(c);
	perf_set_close(&c->perf);
	if (!c->run.end_reason) {
		events_open(c, strcmp(c->unwind.mode, "dwarf") == 0 ? PERF_DWARF : PERF_FP,
			    nthreads);
		synth_existing(c);
	}
	emit_flush(&c->out);
}
