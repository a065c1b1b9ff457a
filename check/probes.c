/*
 * The eBPF load probes of the preflight path: each program is loaded (and attached, as
 * collect's own --check does) for the target and removed again at once.  Nothing is
 * recorded; the allocator uprobes are never attached.
 */
#include <stdio.h>
#include <string.h>

#include <linux/types.h>

#include "defaults.h"
#include "lifecycle.h"
#include "offcpu.h"
#include "offcpu_shared.h"
#include "report.h"

static void
lifecycle_probe(struct report *r)
{
	struct lifecycle_run run = { 0 };
	lifecycle_start(&run, r->pid, 0, NULL, 0);
	if (run.prog) {
		r->lifecycle.status = CAP_OK;
		lifecycle_end(&run);
		return;
	}
	r->lifecycle.status = CAP_UNAVAILABLE;
	snprintf(r->lifecycle.detail, sizeof(r->lifecycle.detail), "%s", run.why);
	report_msg(&r->warnings, "lifecycle eBPF unavailable (%s): record reconciles exec and "
		   "exit from /proc once a second", run.why);
}

static size_t
no_own_frames(void *arg, const uint64_t *ips, size_t n)
{
	(void)arg, (void)ips, (void)n;
	return 0;
}

static void
nothing_before(void *arg, uint32_t pid, const uint64_t *kips, size_t n)
{
	(void)arg, (void)pid, (void)kips, (void)n;
}

static void
offcpu_probe(struct report *r)
{
	struct offcpu_config cfg = {
		.phases = OFFCPU_WANT_BLOCKED, .min_ns = RP_DEFAULT_OFFCPU_MIN_DURATION_US * 1000ull,
		.ring_bytes = RP_DEFAULT_OFFCPU_RING_BUFFER,
		.percent = RP_DEFAULT_OFFCPU_PROBABILITY, .recording = 0,
		.own_frames = no_own_frames, .before = nothing_before,
	};
	char *why = r->offcpu.detail;
	size_t len = sizeof(r->offcpu.detail);
	struct offcpu *o = offcpu_open(r->pid, &cfg, why, len);
	int ok = o && offcpu_attach(o, why, len) == 0;
	offcpu_close(o);
	r->offcpu.status = ok ? CAP_OK : CAP_UNAVAILABLE;
	if (ok)
		why[0] = 0;
	else
		report_msg(&r->warnings, "off-CPU eBPF unavailable: %s: --profiles off-cpu "
			   "would fail", why);
}

void
report_probes(struct report *r)
{
	if (!r->root || r->executable[0] == 0) {
		const char *why = !r->root ? "not root" : "no target";
		r->lifecycle.status = r->offcpu.status = CAP_UNAVAILABLE;
		snprintf(r->lifecycle.detail, sizeof(r->lifecycle.detail), "not probed: %s", why);
		snprintf(r->offcpu.detail, sizeof(r->offcpu.detail), "not probed: %s", why);
		return;
	}
	lifecycle_probe(r);
	offcpu_probe(r);
}
