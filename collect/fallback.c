#include "fallback.h"

#include <err.h>
#include <stdio.h>
#include <string.h>

#include "calib.h"
#include "collect.h"
#include "fpchain.h"

void
fallback_arm(struct collect *c, uint64_t origin)
{
	struct fallback *f = &c->fb;
	f->armed = strcmp(c->o.unwind, "auto") == 0 && strcmp(c->mode, "fp") == 0 &&
		   c->calib_verdict && strcmp(c->calib_verdict, "accepted") == 0;
	f->pending = 0;
	f->width = c->o.window_ns;
	f->start = origin;
	f->end = origin + f->width;
	f->total = f->usable = 0;
}

void
fallback_exec(struct fallback *f)
{
	f->armed = 0;
	f->pending = 0;
	ranges_clear(&f->maps);
}

void
fallback_map(struct fallback *f, uint64_t start, uint64_t end)
{
	ranges_add(&f->maps, start, end);
}

/* Called while the rings are drained, before the round that lets the failed window close,
 * and stamped inside that window, which the warning describes. */
static void
warn_failed(struct collect *c)
{
	struct fallback *f = &c->fb;
	char text[400];
	f->tables = calib_has_unwind_tables(c->o.pid);
	if (!f->tables)
		snprintf(text, sizeof(text), "%s, but the target has no unwind tables "
			 "(.eh_frame or .debug_frame): frame-pointer unwinding stays", f->why);
	else
		snprintf(text, sizeof(text), "%s: unwinding switches to DWARF for the rest of the "
			 "recording", f->why);
	struct fr_warning w = { f->failed_end - 1, str_of(text) };
	emit_warning(&c->out, &w);
	if (c->o.verbose)
		warnx("%s", text);
}

/* Judges the window [start, end) once it is complete, and moves on to the one holding t. */
static void
advance(struct collect *c, uint64_t t)
{
	struct fallback *f = &c->fb;
	if (t < f->end)
		return;
	uint64_t need = FALLBACK_USABLE_PERMILLE;
	if (f->total && f->usable * 1000 < f->total * need) {
		uint64_t pm = f->usable * 1000 / f->total;
		snprintf(f->why, sizeof(f->why), "a window had %llu.%llu%% usable frame-pointer "
			 "stacks (%llu of %llu; need %llu.%llu%%)",
			 (unsigned long long)(pm / 10), (unsigned long long)(pm % 10),
			 (unsigned long long)f->usable, (unsigned long long)f->total,
			 (unsigned long long)(need / 10), (unsigned long long)(need % 10));
		f->pending = 1;
		f->failed_end = f->end;
		f->armed = 0;
		warn_failed(c);
		return;
	}
	/* Windows without samples pass: there is nothing to judge in them. */
	uint64_t skip = (t - f->end) / f->width + 1;
	f->start = f->end + (skip - 1) * f->width;
	f->end = f->start + f->width;
	f->total = f->usable = 0;
}

void
fallback_sample(struct collect *c, uint64_t time, unsigned nkernel, const uint64_t *uips,
		unsigned nuser)
{
	struct fallback *f = &c->fb;
	if (!f->armed)
		return;
	advance(c, time);
	if (!f->armed)
		return;
	int ok = nkernel + nuser > 0 && !fpchain_cyclic(uips, nuser);
	for (unsigned i = 0; ok && i < nuser; i++)
		/* Above the leaf the chain holds return addresses: the call is the byte before. */
		ok = ranges_has(&f->maps, i == 0 ? uips[0] : uips[i] - 1);
	f->total++;
	f->usable += (uint64_t)ok;
}

void
fallback_round(struct collect *c, uint64_t time)
{
	if (c->fb.armed)
		advance(c, time);
}

int
fallback_switch(struct collect *c)
{
	struct fallback *f = &c->fb;

	f->pending = 0;
	if (!f->tables)
		return 0;
	int nthreads = c->perf.ncpu > 0 ? (int)(c->perf.nrings / (size_t)c->perf.ncpu) : 1;
	snprintf(c->fallback_reason, sizeof(c->fallback_reason), "%s", f->why);
	snprintf(c->reason, sizeof(c->reason), "auto: frame pointers accepted, then %s; "
		 "using DWARF", f->why);
	c->mode = "dwarf";
	perf_set_close(&c->perf);
	c->since = f->failed_end;
	synth_target(c, c->release);
	c->since = 0;
	collect_open_events(c, 1, nthreads + 16);
	synth_existing(c);
	emit_flush(&c->out);
	return 1;
}

void
fallback_free(struct fallback *f)
{
	ranges_free(&f->maps);
}
