/* The choice of the unwind mode (mode.h). */
#include "mode.h"

#include <err.h>
#include <stdio.h>
#include <string.h>

#include "collect.h"
#include "launch.h"

/* Without unwind tables DWARF has nothing to walk: fatal unless leaf-only is allowed. */
static void
need_tables(struct unwind_choice *u, const struct collect_opts *o, int tables, const char *why)
{
	if (tables)
		return;
	if (!o->allow_partial)
		errx(1, "%s and the target has no unwind tables (.eh_frame or .debug_frame); "
		     "--allow-partial keeps leaf-only stacks", why);
	snprintf(u->reason + strlen(u->reason), sizeof(u->reason) - strlen(u->reason),
		 "; no unwind tables: leaf-only stacks (--allow-partial)");
}

static void
heap_tick(void *arg)
{
	collect_heap_tick(arg);
	collect_physical_tick(arg);
}

/* --unwind auto: the frame-pointer calibration on events that capture what both modes
 * need; they stay open, and their records kept (records.c), for reopen to write in the mode
 * chosen.  0, or an end. */
static int
calibrate(struct collect *c, int pidfd, int nthreads, int *resumed, struct calib *k)
{
	synth_snapshot(c);
	/* The allocations of the calibration are kept too, from before a launched command
	 * runs (docs/heap.md). */
	collect_heap_hold(c);
	collect_physical_hold(c);
	events_open(c, PERF_BOTH, nthreads);
	if (c->o.launch_argv && !*resumed) {
		launch_resume(c->o.pid);
		*resumed = 1;
	}
	/* While the rings fill: the calibration's samples go out with their kernel names. */
	collect_ksyms(c);
	struct calib_env env = { .perf = &c->perf, .handle = records_handle, .arg = c,
				 .pidfd = pidfd, .pid = c->o.pid,
				 .deadline_ns = c->run.deadline_ns, .tick = heap_tick };
	c->rec.calib = k;
	int end = calib_run(k, &env);
	c->rec.calib = NULL;
	return end;
}

int
mode_choose(struct collect *c, int pidfd, int nthreads, int *resumed)
{
	static struct calib k;
	struct unwind_choice *u = &c->unwind;
	int end;

	u->fallback_reason[0] = 0; /* a new image gets a new choice */
	if (c->o.no_cpu) {
		/* No CPU samples to unwind, so nothing to calibrate: off-CPU user stacks are the
		 * kernel's frame-pointer walk at each switch-out whatever --unwind says
		 * (docs/offcpu.md). */
		u->mode = "fp";
		snprintf(u->reason, sizeof(u->reason), "no cpu profile: off-CPU and allocation "
			 "user stacks are the kernel's frame-pointer walk (--unwind %s does not apply)",
			 c->o.unwind);
		return 0;
	}
	u->mode = strcmp(c->o.unwind, "dwarf") == 0 ? "dwarf" : "fp";
	if (c->o.host) {
		/* The calibration and the fallback judge one target's stacks; host-wide every
		 * process gets the one mode (docs/host.md). */
		snprintf(u->reason, sizeof(u->reason), "%s", strcmp(c->o.unwind, "auto") != 0 ?
			 (u->mode[0] == 'd' ? "host: dwarf requested, for every process" :
			  "host: fp requested, for every process") :
			 "host: auto uses frame pointers for every process (no per-process "
			 "calibration host-wide); --unwind dwarf copies every sample's user stack");
		return 0;
	}
	if (strcmp(c->o.unwind, "auto") != 0) {
		snprintf(u->reason, sizeof(u->reason), "%s requested", u->mode);
		if (strcmp(u->mode, "dwarf") == 0)
			need_tables(u, &c->o, calib_has_unwind_tables(c->o.pid),
				    "dwarf unwinding was requested");
		return 0;
	}
	/* An end during the calibration still has a verdict, on the samples there are. */
	end = calibrate(c, pidfd, nthreads, resumed, &k);
	u->calib = k.result;
	if (k.accepted) {
		snprintf(u->reason, sizeof(u->reason), "auto: frame pointers accepted: %s",
			 k.reason);
	} else {
		u->mode = "dwarf";
		snprintf(u->reason, sizeof(u->reason), "auto: frame pointers rejected: %s; "
			 "using DWARF", k.reason);
		need_tables(u, &c->o, k.tables, "frame pointers were rejected");
	}
	calib_free(&k);
	return end;
}

void
mode_fallback(struct unwind_choice *u, const char *why)
{
	snprintf(u->fallback_reason, sizeof(u->fallback_reason), "%s", why);
	snprintf(u->reason, sizeof(u->reason), "auto: frame pointers accepted, then %s; "
		 "using DWARF", why);
	u->mode = "dwarf";
}
