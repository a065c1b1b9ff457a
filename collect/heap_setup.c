/*
 * collect's side of --profiles heap: options, the allocator probe of the preflight, the
 * collector started once the unwind mode is known (or dropped under --allow-partial, the
 * reason in a warning of the first window), its part of every drain, and its restarts
 * after an exec and the unwind fallback, each with a heap-reset frame and a warning.
 */
#include <err.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect.h"
#include "defaults.h"
#include "kernver.h"
#include "parse.h"
#include "procfs.h"

void
heap_option(struct collect_opts *o, int opt, const char *arg)
{
	char why[160];
	if (opt == OPT_ALLOC_INTERVAL) {
		if (parse_bytes(arg, 1, 1ull << 40, &o->alloc_interval, why, sizeof(why)) < 0)
			errx(1, "--alloc-interval: %s", why);
	} else if (opt == OPT_ALLOCATOR) {
		if (strcmp(arg, "auto") != 0 && strcmp(arg, "rust") != 0 && strcmp(arg, "system") != 0)
			errx(1, "--allocator: unknown family '%s' (auto, rust or system)", arg);
		o->allocator = strcmp(arg, "rust") == 0 ? "rust" : strcmp(arg, "system") == 0 ?
			       "system" : "auto";
	} else if (opt == OPT_UPROBES) {
		if (strcmp(arg, "multi") != 0 && strcmp(arg, "tracefs") != 0)
			errx(1, "--uprobes: unknown way '%s' (tracefs or multi)", arg);
		o->uprobes = strcmp(arg, "multi") == 0 ? HEAP_UPROBES_MULTI : HEAP_UPROBES_TRACEFS;
	}
}

void
heap_defaults(struct collect_opts *o)
{
	heap_option(o, OPT_ALLOC_INTERVAL, RP_DEFAULT_ALLOC_INTERVAL);
	heap_option(o, OPT_ALLOCATOR, RP_DEFAULT_ALLOCATOR);
	heap_option(o, OPT_UPROBES, HEAP_UPROBES_DEFAULT);
}

/* Linux 5.12 (the manual's floor for heap profiling); 0 when the kernel is new enough. */
static int
kernel_too_old(char *why, size_t whylen)
{
	return kernel_below(5, 12, "heap profiling", "", why, whylen) ? -1 : 0;
}

/* Without --allow-partial, or with no other profile, a failure ends collect. */
static void
failed(struct collect *c)
{
	heap_close(c->heap.prog);
	c->heap.prog = NULL;
	if (!c->o.allow_partial || (c->o.no_cpu && !c->o.offcpu))
		errx(1, "%s%s", c->heap.why, c->o.allow_partial ? "; no other profile "
		     "was requested" : "");
	warnx("%s; --allow-partial: recording without heap", c->heap.why);
	c->heap.dropped = 1;
}

/* The allocator probe of the preflight: for --check, and before the recording starts. */
void
collect_heap_probe(struct collect *c)
{
	if (!c->o.heap)
		return;
	struct heap_probe *p = &c->heap.probe;
	if (kernel_too_old(c->heap.why, sizeof(c->heap.why)) < 0) {
		memset(p, 0, sizeof(*p));
		snprintf(p->requested, sizeof(p->requested), "%s", c->o.allocator);
		snprintf(p->reason, sizeof(p->reason), "%.300s", c->heap.why);
		failed(c);
		return;
	}
	if (c->o.pid > 0 && heapsym_detect(c->o.pid, c->o.allocator, p) < 0) {
		snprintf(c->heap.why, sizeof(c->heap.why), "heap: allocator '%s' unavailable: %s",
			 c->o.allocator, p->reason);
		failed(c);
	}
	if (c->o.verbose && p->detected)
		warnx("heap: %s family in %s", p->detected, p->module);
}

static void
judge(void *arg, uint64_t time, const uint64_t *ips, unsigned n)
{
	struct collect *c = arg;
	fallback_heap_stack(&c->fb, &c->out, time, ips, n);
}

static int
open_now(struct collect *c)
{
	struct heap_config cfg = { .interval = c->o.alloc_interval, .uprobes = c->o.uprobes,
				   .dwarf = strcmp(c->unwind.mode, "dwarf") == 0,
				   .verbose = c->o.verbose, .judge = judge, .arg = c,
				   .top = &c->rec.top };
	c->heap.prog = heap_open(c->o.pid, &c->heap.probe, &cfg, c->heap.why, sizeof(c->heap.why));
	return c->heap.prog ? 0 : -1;
}

/* Before auto's calibration: the probes attach with DWARF capture, what either verdict can
 * use, and their records are held until the stream opens.  A failure here is left to
 * collect_heap_start, which tries again and says why. */
void
collect_heap_hold(struct collect *c)
{
	if (!c->o.heap || c->heap.dropped)
		return;
	if (c->heap.prog) {
		/* The calibration of a new image: the stream is open, but the calibration's
		 * samples go out after it, and the allocations must not run ahead of them. */
		heap_drain(c->heap.prog, &c->out, collect_now());
		heap_set_dwarf(c->heap.prog, 1);
		heap_hold(c->heap.prog);
		return;
	}
	struct heap_config cfg = { .interval = c->o.alloc_interval, .uprobes = c->o.uprobes,
				   .dwarf = 1, .verbose = c->o.verbose, .judge = judge, .arg = c,
				   .top = &c->rec.top };
	char why[sizeof(c->heap.why)];
	if ((c->heap.prog = heap_open(c->o.pid, &c->heap.probe, &cfg, why, sizeof(why))))
		heap_hold(c->heap.prog);
}

void
collect_heap_tick(struct collect *c)
{
	if (c->heap.prog)
		heap_drain(c->heap.prog, NULL, 0);
}

void
collect_heap_release(struct collect *c, uint64_t until)
{
	if (!c->heap.prog)
		return;
	uint64_t cut = heap_release(c->heap.prog, &c->out, strcmp(c->unwind.mode, "dwarf") == 0,
				    until, collect_now());
	if (cut && c->o.verbose)
		warnx("heap: %llu allocations of the calibration kept without their stack copy "
		      "(32 MiB held)", (unsigned long long)cut);
}

/* Once the unwind mode is known, before a launched command runs: the probes attach now,
 * unless they did for the calibration.  A target that ended during a
 * calibration has no allocator left to probe: its recording is published without heap,
 * saying so. */
void
collect_heap_start(struct collect *c)
{
	char exe[64];
	if (c->heap.prog)
		return;
	if (!c->o.heap || c->heap.dropped || open_now(c) == 0)
		return;
	/* A target started just before the recording may have been still in its exec when the
	 * preflight found its allocator: the file found then (/proc/PID/map_files of the old
	 * image) is gone.  Found again in the image it runs now, and tried once more. */
	if (procfs_exe(c->o.pid, exe, sizeof(exe)) == 0 &&
	    heapsym_detect(c->o.pid, c->o.allocator, &c->heap.probe) == 0 && open_now(c) == 0)
		return;
	if (procfs_exe(c->o.pid, exe, sizeof(exe)) < 0 && errno == ENOENT) {
		char why[sizeof(c->heap.why)];
		snprintf(why, sizeof(why), "%s", c->heap.why);
		snprintf(c->heap.why, sizeof(c->heap.why), "the target ended before the allocator "
			 "probes were attached (%.400s)", why);
		c->heap.dropped = 2;
		return;
	}
	failed(c);
}

static void
put_reset(struct collect *c, uint64_t at, uint32_t why)
{
	struct fr_heap_reset r = { at, (uint32_t)c->o.pid, why };
	emit_heap_reset(&c->out, &r);
}

static void
warn_at(struct collect *c, uint64_t at, const char *text)
{
	struct fr_warning w = { at, str_of(text) };
	emit_warning(&c->out, &w);
}

void
collect_heap_exec(struct collect *c, uint64_t at)
{
	if (!c->heap.prog)
		return;
	heap_drain(c->heap.prog, &c->out, collect_now());
	put_reset(c, at, HEAP_RESET_EXEC);
}

/* The new image's allocator, probed anew.  The old probes go on firing in the new image
 * when it maps the same allocator file (a uprobe follows the task's new mm), so until the
 * new probes are attached the old ones keep its blocks; the new program takes over their
 * table, or a free of one of them would go unseen and keep it in use for ever.  The two
 * overlap a moment: an allocation both report is one block at one address (aggregate
 * replaces it), a free both report is matched once.  0, or -1 with the reason in
 * c->heap.why. */
static int
after_exec(struct collect *c)
{
	struct heap *old = c->heap.prog;
	c->heap.prog = NULL;
	int rc = heapsym_detect(c->o.pid, c->o.allocator, &c->heap.probe);
	if (rc < 0)
		snprintf(c->heap.why, sizeof(c->heap.why), "allocator '%s' unavailable: %.400s",
			 c->o.allocator, c->heap.probe.reason);
	else
		rc = open_now(c);
	heap_drain(old, &c->out, collect_now());
	if (rc == 0 && c->o.verbose)
		warnx("heap: %zu live samples of the old probes taken over",
		      heap_take_live(c->heap.prog, old));
	else if (rc == 0)
		heap_take_live(c->heap.prog, old);
	heap_close(old);
	return rc;
}

/* The heap state restarts at `at`: after an exec (its reset went out when it was seen,
 * before the new image's calibration), for the new image's allocator; after the fallback
 * (at 0: now), with the registers and stack copies of DWARF. */
void
collect_heap_restart(struct collect *c, uint32_t why, uint64_t at)
{
	if (!c->heap.prog)
		return;
	heap_drain(c->heap.prog, &c->out, collect_now());
	if (!at)
		at = collect_now();
	if (why != HEAP_RESET_EXEC) {
		heap_set_dwarf(c->heap.prog, 1);
		put_reset(c, at, why);
		warn_at(c, at, "heap state cleared: the allocator probes switched to DWARF stacks "
		     "with the unwind fallback; in-use values restart here");
		return;
	}
	if (after_exec(c) < 0) {
		char text[640];
		snprintf(text, sizeof(text), "heap state cleared: the target executed a new image, "
			 "and heap stops there: %.560s", c->heap.why);
		warn_at(c, at, text);
		return;
	}
	warn_at(c, at, "heap state cleared: the target executed a new image; in-use values "
	     "restart here");
}

void
collect_heap_announce(const struct heap_run *r, struct emit *out, uint64_t time)
{
	if (!r->dropped)
		return;
	char text[600];
	snprintf(text, sizeof(text), "heap dropped%s: %s", r->dropped == 1 ?
		 " (--allow-partial)" : "", r->why);
	struct fr_warning w = { time, str_of(text) };
	emit_warning(out, &w);
}

void
collect_heap_drain(struct heap_run *r, struct emit *out, uint64_t now)
{
	if (r->prog)
		heap_drain(r->prog, out, now);
}

void
collect_heap_last(struct heap_run *r, struct emit *out, uint64_t end)
{
	if (r->prog)
		heap_drain(r->prog, out, end);
}

void
collect_heap_stop(struct heap_run *r)
{
	heap_close(r->prog);
	r->prog = NULL;
}

void
collect_heap_end(struct heap_run *r, struct emit *out, uint64_t end)
{
	collect_heap_last(r, out, end);
	collect_heap_stop(r);
}
