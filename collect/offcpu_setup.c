/*
 * collect's side of --profiles off-cpu: options, starting the collector (or dropping it
 * under --allow-partial, with the reason in a warning of the first window), and its part
 * of every drain and of the end.
 */
#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect.h"
#include "defaults.h"
#include "offcpu.h"
#include "offcpu_shared.h"
#include "parse.h"

void
offcpu_defaults(struct collect_opts *o)
{
	offcpu_profiles(o, RP_DEFAULT_PROFILES);
	offcpu_option(o, OPT_OFFCPU_PHASE, RP_DEFAULT_OFFCPU_PHASE);
	o->offcpu_min_ns = (uint64_t)RP_DEFAULT_OFFCPU_MIN_DURATION_US * 1000;
	o->offcpu_ring_bytes = RP_DEFAULT_OFFCPU_RING_BUFFER;
	o->offcpu_percent = RP_DEFAULT_OFFCPU_PROBABILITY;
}

/* cpu, heap, off-cpu, physical-alloc and physical-usage, in the order given, duplicates
 * removed. */
void
offcpu_profiles(struct collect_opts *o, const char *list)
{
	static char kept[64];
	static const char *const names[] = { "cpu", "heap", "off-cpu", "physical-alloc",
					     "physical-usage" };
	int cpu = 0;
	int *flags[] = { &cpu, &o->heap, &o->offcpu, &o->physical_alloc, &o->physical_usage };
	char *copy = strdup(list), *save = NULL;
	if (!copy)
		errx(1, "out of memory");
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		*flags[i] = 0;
	kept[0] = 0;
	for (char *p = strtok_r(copy, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
		size_t i = 0;
		while (i < sizeof(names) / sizeof(names[0]) && strcmp(p, names[i]) != 0)
			i++;
		if (i == sizeof(names) / sizeof(names[0]))
			errx(1, "unknown profile '%s' (cpu, heap, off-cpu, physical-alloc or "
			     "physical-usage)", p);
		if (!*flags[i])
			snprintf(kept + strlen(kept), sizeof(kept) - strlen(kept), "%s%s",
				 kept[0] ? "," : "", p);
		*flags[i] = 1;
	}
	free(copy);
	if (!kept[0])
		errx(1, "--profiles: empty list");
	o->no_cpu = !cpu;
	o->physical = o->physical_alloc || o->physical_usage;
	o->profiles = kept;
}

void
offcpu_option(struct collect_opts *o, int opt, const char *arg)
{
	char why[128];
	uint64_t v;
	if (opt == OPT_OFFCPU_PHASE) {
		if (strcmp(arg, "blocked") == 0)
			o->offcpu_phases = OFFCPU_WANT_BLOCKED;
		else if (strcmp(arg, "runqueue") == 0)
			o->offcpu_phases = OFFCPU_WANT_RUNQUEUE;
		else if (strcmp(arg, "all") == 0)
			o->offcpu_phases = OFFCPU_WANT_BLOCKED | OFFCPU_WANT_RUNQUEUE;
		else
			errx(1, "--offcpu-phase: unknown phase '%s' (blocked, runqueue or all)", arg);
	} else if (opt == OPT_OFFCPU_MIN) {
		if (parse_u64(arg, 0, 3600000000ull, &v, why, sizeof(why)) < 0)
			errx(1, "--offcpu-min-duration-us: %s", why);
		o->offcpu_min_ns = v * 1000;
	} else if (opt == OPT_OFFCPU_RING) {
		/* The kernel wants a power of two of whole pages. */
		if (parse_u64(arg, 4096, 1u << 30, &v, why, sizeof(why)) < 0)
			errx(1, "--offcpu-ring-buffer: %s", why);
		if (v & (v - 1))
			errx(1, "--offcpu-ring-buffer: %s is not a power of two", arg);
		o->offcpu_ring_bytes = v;
	} else if (opt == OPT_OFFCPU_PROBABILITY) {
		if (parse_u64(arg, 1, 100, &v, why, sizeof(why)) < 0)
			errx(1, "--offcpu-probability: %s", why);
		o->offcpu_percent = (unsigned)v;
	} else if (opt == OPT_OFFCPU_BTF) {
		o->offcpu_btf = arg;
	}
}

static void
before(void *arg, uint32_t pid, const uint64_t *kips, size_t n)
{
	struct collect *c = arg;
	synth_if_new(c, pid);
	send_ksyms(&c->ksyms, &c->out, kips, n);
}

/* The program's stacks start inside the program and the tracepoint's call of it. */
static size_t
own_frames(void *arg, const uint64_t *ips, size_t n)
{
	static const char *const own[] = { "bpf_prog_", "bpf_trace_run", "__bpf_trace_",
					   "__traceiter_" };
	struct collect *c = arg;
	size_t i = 0;
	for (; i < n; i++) {
		const struct ksym *s = ksyms_find(&c->ksyms, ips[i]);
		size_t k = 0;
		while (s && k < sizeof(own) / sizeof(own[0]) &&
		       strncmp(s->name, own[k], strlen(own[k])) != 0)
			k++;
		if (!s || k == sizeof(own) / sizeof(own[0]))
			break;
	}
	return i;
}

static struct offcpu *
open_for(struct collect *c, int recording, char *why, size_t whylen)
{
	struct offcpu_config cfg = { .phases = c->o.offcpu_phases, .min_ns = c->o.offcpu_min_ns,
				     .ring_bytes = c->o.offcpu_ring_bytes,
				     .percent = c->o.offcpu_percent,
				     .btf_path = c->o.offcpu_btf, .recording = recording,
				     .before = before, .own_frames = own_frames, .arg = c,
				     .cgroup_id = scope_cgroup_id(&c->scope),
				     .verbose = c->o.verbose,
				     .cpus = c->o.cpuid.set ? &c->o.cpuid.cpus : NULL };
	return offcpu_open(c->o.pid, &cfg, why, whylen);
}

/* Without --allow-partial, or with nothing else to record, a failure ends collect. */
static void
failed(struct collect *c)
{
	offcpu_close(c->offcpu.prog);
	c->offcpu.prog = NULL;
	if (!c->o.allow_partial || (c->o.no_cpu && !c->o.heap))
		errx(1, "%s%s", c->offcpu.why, c->o.allow_partial ? "; no other profile "
		     "was requested" : "");
	warnx("%s; --allow-partial: recording without off-cpu", c->offcpu.why);
	c->offcpu.dropped = 1;
}

void
collect_offcpu_probe(struct collect *c)
{
	if (!c->o.offcpu)
		return;
	c->offcpu.prog = open_for(c, 0, c->offcpu.why, sizeof(c->offcpu.why));
	if (!c->offcpu.prog || offcpu_attach(c->offcpu.prog, c->offcpu.why,
					     sizeof(c->offcpu.why)) < 0)
		failed(c);
	offcpu_close(c->offcpu.prog);
	c->offcpu.prog = NULL;
}

/* Loaded before the recording starts, which the loading (the verifier) would delay. */
void
collect_offcpu_load(struct collect *c)
{
	if (!c->o.offcpu)
		return;
	c->offcpu.prog = open_for(c, 1, c->offcpu.why, sizeof(c->offcpu.why));
	if (!c->offcpu.prog)
		failed(c);
}

/* At the recording's start, before any unwind calibration. */
void
collect_offcpu_begin(struct collect *c)
{
	if (c->offcpu.prog && offcpu_begin(c->offcpu.prog, c->run.start_ns, c->run.deadline_ns,
					   c->offcpu.why, sizeof(c->offcpu.why)) < 0)
		failed(c);
}

/* After it: the switch program is attached. */
void
collect_offcpu_start(struct collect *c)
{
	if (c->offcpu.prog && offcpu_attach(c->offcpu.prog, c->offcpu.why,
					    sizeof(c->offcpu.why)) < 0)
		failed(c);
}

void
collect_offcpu_announce(const struct offcpu_run *r, struct emit *out, uint64_t time)
{
	if (!r->dropped)
		return;
	char text[400];
	int n = snprintf(text, sizeof(text), "off-cpu dropped (--allow-partial): %s", r->why);
	struct fr_warning w = { time, { text, (uint16_t)(n < (int)sizeof(text) ? n :
						       (int)sizeof(text) - 1) } };
	emit_warning(out, &w);
}

void
collect_offcpu_drain(struct offcpu_run *r, struct emit *out, uint64_t *round)
{
	if (r->prog)
		offcpu_drain(r->prog, out, round);
}

void
collect_offcpu_last(struct offcpu_run *r, struct emit *out, uint64_t end)
{
	if (r->prog)
		offcpu_finish(r->prog, out, end);
}

void
collect_offcpu_stop(struct offcpu_run *r)
{
	if (!r->prog)
		return;
	offcpu_close(r->prog);
	r->prog = NULL;
}

void
collect_offcpu_end(struct offcpu_run *r, struct emit *out, uint64_t end)
{
	collect_offcpu_last(r, out, end);
	collect_offcpu_stop(r);
}
