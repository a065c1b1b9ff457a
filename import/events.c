/*
 * Which event becomes the CPU profile, and the closing summary.  A capture may hold several
 * events (a group, hardware and software events, a tracepoint next to cycles); the windows
 * hold one of them, so their periods add up in one unit, and the diagnostics say which.
 *
 * A hybrid machine records one event per core type (cpu_core/cycles/ and cpu_atom/cycles/
 * on Intel): those are one event split by where the thread ran, so they are imported
 * together.  The default is the best event that has samples: a capture counts them first
 * (file mode) or by the time the first sample is due (pipe mode, see events_choose).
 */
#include <stdio.h>
#include <string.h>

#include "import.h"

#define FLAG_FREQ (1ull << 10)

/* The event's id among the generic ones: a hybrid PMU's type rides in config's high half. */
static uint64_t
generic_config(const struct attr *a)
{
	return (a->type == 0 || a->type == 3) ? a->config & 0xffffffffull : a->config;
}

/* CPU time first (cpu-clock, task-clock), then cycles, then any other sampling event;
 * tracepoints and the dummy event sample occurrences, not time. */
static int
score(const struct attr *a)
{
	if (a->type == 1 && a->config <= 1)
		return 3;
	if (a->type == 0 && generic_config(a) == 0)
		return 2;
	if (a->type == 2 || (a->type == 1 && a->config == 9))
		return 0;
	return 1;
}

static int
name_matches(const char *name, const char *want)
{
	size_t n = strlen(want);
	/* "cycles" names "cycles:u" and "cycles:ppp" too. */
	return strncmp(name, want, n) == 0 && (name[n] == 0 || name[n] == ':');
}

/* "cpu_core/cycles/u" is "cycles:u" on its PMU "cpu_core"; a name without a PMU is its own
 * base.  pmu gets the PMU's length (0 without one). */
static void
base_name(const char *name, char *base, size_t n, size_t *pmu)
{
	const char *s = strchr(name, '/'), *e = s ? strchr(s + 1, '/') : NULL;
	*pmu = 0;
	if (!s || !e || s == name || e == s + 1 || memchr(s + 1, '=', (size_t)(e - s - 1))) {
		snprintf(base, n, "%s", name);
		return;
	}
	*pmu = (size_t)(s - name);
	snprintf(base, n, "%.*s%s%s", (int)(e - s - 1), s + 1, e[1] ? ":" : "", e + 1);
}

/* Names every attr and joins the events that differ only by PMU. */
static void
group_events(struct imp *m)
{
	size_t pmu[IMP_MAX_ATTRS];
	for (size_t i = 0; i < m->nattrs; i++) {
		struct attr *a = &m->attrs[i];
		if (!a->name[0])
			attr_default_name(m, a, a->name, sizeof(a->name));
		base_name(a->name, a->base, sizeof(a->base), &pmu[i]);
		a->group = (int)i;
		for (size_t j = 0; j < i && pmu[i]; j++)
			if (pmu[j] && m->attrs[j].group == (int)j &&
			    !strcmp(m->attrs[j].base, a->base) &&
			    (pmu[i] != pmu[j] || memcmp(a->name, m->attrs[j].name, pmu[i]))) {
				a->group = (int)j;
				break;
			}
	}
}

static void
select_group(struct imp *m, int g)
{
	m->chosen = g;
	for (size_t i = 0; i < m->nattrs; i++)
		m->attrs[i].selected = m->attrs[i].group == g;
}

/* --event NAME: the events named so (NAME also matches NAME:modifiers), or those whose
 * name without the PMU is NAME; "cycles" takes cpu_core/cycles/ and cpu_atom/cycles/. */
static int
choose_named(struct imp *m)
{
	int found = -1;
	for (size_t i = 0; i < m->nattrs; i++) {
		struct attr *a = &m->attrs[i];
		a->selected = name_matches(a->name, m->want_event) ||
			      name_matches(a->base, m->want_event);
		if (a->selected && found < 0)
			found = (int)i;
	}
	if (found >= 0) {
		m->chosen = found;
		return 0;
	}
	char list[400] = "";
	for (size_t i = 0; i < m->nattrs; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "",
			 m->attrs[i].name);
	return imp_fail(m, 0, "no event named '%s' in the capture (it has: %s)", m->want_event,
			list);
}

int
events_prepare(struct imp *m)
{
	if (m->prepared)
		return 0;
	if (m->nattrs == 0)
		return imp_fail(m, 0, "no event attributes before the first record");
	m->prepared = 1;
	group_events(m);
	if (m->want_event)
		return choose_named(m);
	if (m->nattrs == 1)
		select_group(m, 0);
	return 0;
}

/* The default: an event with samples before one without, then by score, then the first.
 * The samples are those counted so far: all of them in file mode; in pipe mode those read
 * before the first sample had to be written, at least the capture's first round. */
int
events_choose(struct imp *m)
{
	if (m->chosen >= 0)
		return 0;
	if (events_prepare(m) < 0 || m->chosen >= 0)
		return m->err[0] ? -1 : 0;
	uint64_t seen[IMP_MAX_ATTRS] = { 0 };
	for (size_t i = 0; i < m->nattrs; i++)
		seen[m->attrs[i].group] += m->attrs[i].seen;
	int best = 0;
	for (size_t i = 1; i < m->nattrs; i++) {
		const struct attr *a = &m->attrs[i], *b = &m->attrs[best];
		if (a->group != (int)i)
			continue;
		int ha = seen[i] > 0, hb = seen[best] > 0;
		if (ha > hb || (ha == hb && score(a) > score(b)))
			best = (int)i;
	}
	select_group(m, best);
	return 0;
}

/* The pprof sample type of the profile's values: CPU nanoseconds for the clock events,
 * else a count of the event (cycles/count, instructions/count, page-faults/count). */
void
events_unit(const struct imp *m, const char **type, const char **unit)
{
	static char name[64];
	const struct attr *a = m->chosen >= 0 ? &m->attrs[m->chosen] : NULL;
	*type = "cpu";
	*unit = "nanoseconds";
	if (!a || (a->type == 1 && a->config <= 1))
		return;
	struct attr plain = *a;
	plain.config = generic_config(a);
	if (a->type <= 1 && attr_generic_name(&plain, name, sizeof(name)))
		*type = name;
	else {
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(a->base, ":"), a->base);
		*type = name;
	}
	*unit = "count";
}
