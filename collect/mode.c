/*
 * The choice of the unwind mode (manual: "Unwinding and automatic fallback") and the opening
 * of the sampling events in that mode: at the start, and again after an exec of the target.
 */
#include <err.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "calib.h"
#include "collect.h"
#include "preflight.h"

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

static void
refresh_preflight(struct collect *c)
{
	struct preflight pf;
	preflight_run(&c->o, &pf);
}

void
collect_open_events(struct collect *c, int dwarf, int nthreads)
{
	char why[256];
	/* Without a cpu profile the events only follow mappings, names and threads. */
	if (perf_set_init(&c->perf, c->o.no_cpu ? 0 : c->o.freq, dwarf, why, sizeof(why)) < 0)
		errx(1, "%s", why);
	raise_nofile(nthreads, c->perf.ncpu);
	collect_attach(c);
}

/* Without unwind tables DWARF has nothing to walk: fatal unless leaf-only is allowed. */
static void
need_tables(struct collect *c, const char *why)
{
	if (calib_has_unwind_tables(c->o.pid))
		return;
	if (!c->o.allow_partial)
		errx(1, "%s and the target has no unwind tables (.eh_frame or .debug_frame); "
		     "--allow-partial keeps leaf-only stacks", why);
	snprintf(c->reason + strlen(c->reason), sizeof(c->reason) - strlen(c->reason),
		 "; no unwind tables: leaf-only stacks (--allow-partial)");
}

/* --unwind auto: the frame-pointer calibration decides (the target runs meanwhile). */
int
collect_choose_mode(struct collect *c, int pidfd, int nthreads, int *resumed)
{
	static struct calib k;
	int end;

	if (c->o.no_cpu) {
		/* No CPU samples to unwind, so nothing to calibrate: off-CPU user stacks are the
		 * kernel's frame-pointer walk at each switch-out whatever --unwind says
		 * (docs/offcpu.md). */
		c->mode = "fp";
		snprintf(c->reason, sizeof(c->reason), "no cpu profile: off-CPU user stacks are "
			 "the kernel's frame-pointer walk (--unwind %s does not apply)", c->o.unwind);
		return 0;
	}
	c->mode = strcmp(c->o.unwind, "dwarf") == 0 ? "dwarf" : "fp";
	if (strcmp(c->o.unwind, "auto") != 0) {
		snprintf(c->reason, sizeof(c->reason), "%s requested", c->mode);
		if (strcmp(c->mode, "dwarf") == 0)
			need_tables(c, "dwarf unwinding was requested");
		return 0;
	}
	collect_open_events(c, 0, nthreads);
	if (c->o.launch_argv && !*resumed) {
		launch_resume(c->o.pid);
		*resumed = 1;
	}
	end = calib_run(c, pidfd, &k, refresh_preflight);
	perf_set_close(&c->perf);
	if (end) {
		calib_free(&k);
		return end;
	}
	c->calib_samples = k.samples;
	c->calib_mapped = k.addrs ? (uint32_t)(k.mapped * 1000 / k.addrs) : 0;
	c->calib_deep = k.samples ? k.deep * 1000 / k.samples : 0;
	c->calib_cycles = k.cycles;
	c->calib_verdict = k.accepted ? "accepted" : "rejected";
	if (k.accepted) {
		snprintf(c->reason, sizeof(c->reason), "auto: frame pointers accepted: %s",
			 k.reason);
	} else {
		c->mode = "dwarf";
		snprintf(c->reason, sizeof(c->reason), "auto: frame pointers rejected: %s; "
			 "using DWARF", k.reason);
		need_tables(c, "frame pointers were rejected");
	}
	calib_free(&k);
	return 0;
}

