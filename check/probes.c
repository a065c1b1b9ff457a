/*
 * The eBPF load probes of the preflight path: each program is loaded (and attached, as
 * collect's own --check does) for the target and removed again at once.  Nothing is
 * recorded; the allocator uprobes are never attached.
 */
#include <stdio.h>
#include <string.h>

#include <linux/types.h>

#include "defaults.h"
#include "heap.h"
#include "lifecycle.h"
#include "offcpu.h"
#include "offcpu_shared.h"
#include "report.h"

static void
lifecycle_probe(struct report *r)
{
	struct lifecycle_run run = { 0 };
	lifecycle_start(&run, r->pid, 0, 0);
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

/* The family record's default (auto) would probe, then the program loaded without any
 * uprobe attached: eligible only with Linux 5.12+ and a family found. */
static void
heap_probe(struct report *r)
{
	r->alloc_checked = 1;
	if (heapsym_detect(r->pid, RP_DEFAULT_ALLOCATOR, &r->alloc) < 0) {
		r->heap.status = CAP_NOT_APPLICABLE;
		snprintf(r->heap.detail, sizeof(r->heap.detail), "no supported allocator");
		report_msg(&r->warnings, "heap: no supported allocator (%s): the default --profiles "
			   "cpu,heap fails; record with --profiles cpu or --allow-partial",
			   r->alloc.reason);
		return;
	}
	if (!preflight_kernel_at_least(&r->pf, 5, 12)) {
		r->heap.status = CAP_UNAVAILABLE;
		snprintf(r->heap.detail, sizeof(r->heap.detail), "Linux %s is older than 5.12",
			 r->pf.release);
		report_msg(&r->warnings, "heap: Linux %s is older than 5.12: the default --profiles "
			   "cpu,heap fails; record with --profiles cpu or --allow-partial",
			   r->pf.release);
		return;
	}
	r->heap.status = heap_load_probe(r->pid, r->heap.detail, sizeof(r->heap.detail)) == 0 ?
			 CAP_OK : CAP_UNAVAILABLE;
	if (r->heap.status != CAP_OK)
		report_msg(&r->warnings, "heap eBPF unavailable: %s", r->heap.detail);
}

void
report_probes(struct report *r)
{
	if (!r->root || r->executable[0] == 0) {
		const char *why = !r->root ? "not root" : "no target";
		struct cap *caps[] = { &r->lifecycle, &r->offcpu, &r->heap };
		for (size_t i = 0; i < sizeof(caps) / sizeof(*caps); i++) {
			caps[i]->status = CAP_UNAVAILABLE;
			snprintf(caps[i]->detail, sizeof(caps[i]->detail), "not probed: %s", why);
		}
		return;
	}
	lifecycle_probe(r);
	offcpu_probe(r);
	heap_probe(r);
}
