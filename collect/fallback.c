#include "fallback.h"

#include <err.h>
#include <stdio.h>
#include <string.h>

#include "calib.h"
#include "fpchain.h"

void
fallback_init(struct fallback *f, pid_t pid, uint64_t width, int verbose)
{
	f->pid = pid;
	f->width = width;
	f->verbose = verbose;
}

void
fallback_arm(struct fallback *f, const char *requested, const struct unwind_choice *u,
	     uint64_t origin)
{
	f->armed = strcmp(requested, "auto") == 0 && strcmp(u->mode, "fp") == 0 &&
		   u->calib.verdict && strcmp(u->calib.verdict, "accepted") == 0;
	f->pending = 0;
	f->start = origin;
	f->end = origin + f->width;
	f->total = f->usable = f->heap_total = f->heap_usable = 0;
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
warn_failed(struct fallback *f, struct emit *out)
{
	char text[400];
	f->tables = calib_has_unwind_tables(f->pid);
	if (!f->tables)
		snprintf(text, sizeof(text), "%s, but the target has no unwind tables "
			 "(.eh_frame or .debug_frame): frame-pointer unwinding stays", f->why);
	else
		snprintf(text, sizeof(text), "%s: unwinding switches to DWARF for the rest of the "
			 "recording", f->why);
	struct fr_warning w = { f->failed_end - 1, str_of(text) };
	emit_warning(out, &w);
	if (f->verbose)
		warnx("%s", text);
}

/* 1 when usable of total stacks is below the threshold (a kind without stacks passes). */
static int
poor(uint64_t total, uint64_t usable)
{
	return total && usable * 1000 < total * FALLBACK_USABLE_PERMILLE;
}

/* The window failed on the kind with the lower quality (CPU or heap stacks): why. */
static void
say_why(struct fallback *f)
{
	int heap = poor(f->heap_total, f->heap_usable) &&
		   (!poor(f->total, f->usable) ||
		    f->heap_usable * f->total < f->usable * f->heap_total);
	uint64_t total = heap ? f->heap_total : f->total, usable = heap ? f->heap_usable : f->usable;
	uint64_t pm = usable * 1000 / total, need = FALLBACK_USABLE_PERMILLE;
	snprintf(f->why, sizeof(f->why), "a window had %llu.%llu%% usable frame-pointer "
		 "%sstacks (%llu of %llu; need %llu.%llu%%)",
		 (unsigned long long)(pm / 10), (unsigned long long)(pm % 10),
		 heap ? "allocation " : "", (unsigned long long)usable, (unsigned long long)total,
		 (unsigned long long)(need / 10), (unsigned long long)(need % 10));
}

/* Judges the window [start, end) once it is complete, and moves on to the one holding t:
 * the minimum of the CPU and the heap stack quality counts (manual). */
static void
advance(struct fallback *f, struct emit *out, uint64_t t)
{
	if (t < f->end)
		return;
	if (poor(f->total, f->usable) || poor(f->heap_total, f->heap_usable)) {
		say_why(f);
		f->pending = 1;
		f->failed_end = f->end;
		f->armed = 0;
		warn_failed(f, out);
		return;
	}
	/* Windows without samples pass: there is nothing to judge in them. */
	uint64_t skip = (t - f->end) / f->width + 1;
	f->start = f->end + (skip - 1) * f->width;
	f->end = f->start + f->width;
	f->total = f->usable = f->heap_total = f->heap_usable = 0;
}

/* A frame-pointer chain as unwind will judge it. */
static int
usable(const struct fallback *f, unsigned nkernel, const uint64_t *uips, unsigned nuser)
{
	int ok = nkernel + nuser > 0 && !fpchain_cyclic(uips, nuser);
	for (unsigned i = 0; ok && i < nuser; i++)
		/* Above the leaf the chain holds return addresses: the call is the byte before. */
		ok = ranges_has(&f->maps, i == 0 ? uips[0] : uips[i] - 1);
	return ok;
}

void
fallback_heap_stack(struct fallback *f, struct emit *out, uint64_t time, const uint64_t *uips,
		    unsigned nuser)
{
	if (!f->armed)
		return;
	advance(f, out, time);
	if (!f->armed)
		return;
	/* Every address of an allocation stack is a return address. */
	int ok = nuser > 0 && !fpchain_cyclic(uips, nuser);
	for (unsigned i = 0; ok && i < nuser; i++)
		ok = ranges_has(&f->maps, uips[i] - 1);
	f->heap_total++;
	f->heap_usable += (uint64_t)ok;
}

void
fallback_sample(struct fallback *f, struct emit *out, uint64_t time, unsigned nkernel,
		const uint64_t *uips, unsigned nuser)
{
	if (!f->armed)
		return;
	advance(f, out, time);
	if (!f->armed)
		return;
	f->total++;
	f->usable += (uint64_t)usable(f, nkernel, uips, nuser);
}

void
fallback_round(struct fallback *f, struct emit *out, uint64_t time)
{
	if (f->armed)
		advance(f, out, time);
}

int
fallback_decide(struct fallback *f, uint64_t *since, const char **why)
{
	if (!f->pending)
		return 0;
	f->pending = 0;
	if (!f->tables)
		return 0;
	*since = f->failed_end;
	*why = f->why;
	return 1;
}

void
fallback_free(struct fallback *f)
{
	ranges_free(&f->maps);
}
