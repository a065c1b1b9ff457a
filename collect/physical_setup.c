/*
 * collect's side of --profiles physical-alloc and physical-usage (docs/physical.md): the
 * probability option, the preflight's check that the page allocator program loads, the
 * collector attached before auto's calibration (its records held for the stream) or at
 * the start, its part of every drain, and its end.  The processes covered are the
 * target's: its cgroup when the scope is one (launch, a container), else its pid.
 */
#include <err.h>
#include <stdio.h>
#include <string.h>

#include "collect.h"
#include "parse.h"

void
physical_option(struct collect_opts *o, const char *arg)
{
	uint64_t v;
	char why[128];
	if (parse_u64(arg, 1, 100, &v, why, sizeof(why)) < 0)
		errx(1, "--physical-memory-probability: %s (a percentage, 1 to 100)", why);
	o->physical_percent = (unsigned)v;
}

/* A process of the cgroup that the stream does not know yet gets its mappings first. */
static void
seen(void *arg, uint32_t pid)
{
	synth_if_new(arg, pid);
}

static int
open_now(struct collect *c)
{
	struct physical_config cfg = { .pid = c->o.pid, .cgroup_id = scope_cgroup_id(&c->scope),
				       .probability = c->o.physical_percent,
				       .verbose = c->o.verbose, .seen = seen, .arg = c };
	c->physical.prog = physical_open(&cfg, c->physical.why, sizeof(c->physical.why));
	return c->physical.prog ? 0 : -1;
}

/* Without --allow-partial, or with no other profile, a failure ends collect. */
static void
failed(struct collect *c)
{
	int others = !c->o.no_cpu || c->o.offcpu || c->o.heap;
	if (!c->o.allow_partial || !others)
		errx(1, "%s%s", c->physical.why, c->o.allow_partial ? "; no other profile "
		     "was requested" : "");
	warnx("%s; --allow-partial: recording without the physical memory profiles",
	      c->physical.why);
	c->physical.dropped = 1;
}

void
collect_physical_probe(struct collect *c)
{
	if (!c->o.physical || c->physical.dropped)
		return;
	if (open_now(c) < 0) {
		failed(c);
		return;
	}
	physical_close(c->physical.prog);
	c->physical.prog = NULL;
}

void
collect_physical_hold(struct collect *c)
{
	if (!c->o.physical || c->physical.dropped)
		return;
	if (c->physical.prog) {
		/* The calibration of a new image: its samples go out after it. */
		physical_drain(c->physical.prog, &c->out, collect_now());
	} else if (open_now(c) < 0) {
		return; /* collect_physical_start tries again and says why */
	}
	physical_hold(c->physical.prog);
}

void
collect_physical_tick(struct collect *c)
{
	if (c->physical.prog)
		physical_drain(c->physical.prog, NULL, 0);
}

void
collect_physical_release(struct collect *c, uint64_t until)
{
	if (c->physical.prog)
		physical_release(c->physical.prog, &c->out, until, collect_now());
}

void
collect_physical_start(struct collect *c)
{
	if (!c->o.physical || c->physical.dropped || c->physical.prog)
		return;
	if (open_now(c) < 0)
		failed(c);
}

void
collect_physical_announce(const struct physical_run *r, struct emit *out, uint64_t t)
{
	if (!r->dropped)
		return;
	char text[480];
	snprintf(text, sizeof(text), "physical memory profiles dropped (--allow-partial): %s",
		 r->why);
	struct fr_warning w = { t, str_of(text) };
	emit_warning(out, &w);
}

void
collect_physical_drain(struct physical_run *r, struct emit *out, uint64_t now)
{
	if (r->prog)
		physical_drain(r->prog, out, now);
}

void
collect_physical_last(struct physical_run *r, struct emit *out, uint64_t end)
{
	if (r->prog)
		physical_drain(r->prog, out, end);
}

void
collect_physical_stop(struct physical_run *r)
{
	if (!r->prog)
		return;
	physical_close(r->prog);
	r->prog = NULL;
	r->watched_fd = 0;
}

void
collect_physical_end(struct physical_run *r, struct emit *out, uint64_t end)
{
	collect_physical_last(r, out, end);
	collect_physical_stop(r);
}
