/*
 * Which event becomes the CPU profile, and the closing summary.  A capture may hold several
 * events (a group, hardware and software events, a tracepoint next to cycles); the windows
 * hold one of them, so their periods add up in one unit, and the diagnostics say which.
 */
#include <stdio.h>
#include <string.h>

#include "import.h"

#define FLAG_FREQ (1ull << 10)

/* CPU time first (cpu-clock, task-clock), then cycles, then any other sampling event;
 * tracepoints and the dummy event sample occurrences, not time. */
static int
score(const struct attr *a)
{
	if (a->type == 1 && a->config <= 1)
		return 3;
	if (a->type == 0 && a->config == 0)
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

int
records_choose_event(struct imp *m)
{
	if (m->nattrs == 0)
		return imp_fail(m, 0, "no event attributes before the first record");
	for (size_t i = 0; i < m->nattrs; i++)
		if (!m->attrs[i].name[0])
			attr_default_name(&m->attrs[i], m->attrs[i].name, sizeof(m->attrs[i].name));
	m->chosen = 0;
	for (size_t i = 0; i < m->nattrs; i++) {
		if (m->want_event) {
			if (name_matches(m->attrs[i].name, m->want_event)) {
				m->chosen = (int)i;
				return 0;
			}
		} else if (score(&m->attrs[i]) > score(&m->attrs[m->chosen])) {
			m->chosen = (int)i;
		}
	}
	if (!m->want_event)
		return 0;
	char list[400] = "";
	for (size_t i = 0; i < m->nattrs; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "",
			 m->attrs[i].name);
	return imp_fail(m, 0, "no event named '%s' in the capture (it has: %s)", m->want_event,
			list);
}

static const char *
type_name(uint32_t t)
{
	static const char *const k[] = {
		[6] = "UNTHROTTLE", [8] = "READ", [11] = "AUX", [12] = "ITRACE_START",
		[14] = "SWITCH", [15] = "SWITCH_CPU_WIDE", [16] = "NAMESPACES",
		[17] = "KSYMBOL", [18] = "BPF_EVENT", [19] = "CGROUP", [20] = "TEXT_POKE",
		[21] = "AUX_OUTPUT_HW_ID",
	};
	if (t < sizeof(k) / sizeof(k[0]) && k[t])
		return k[t];
	if (t >= 32768)
		return "SIMPLEPERF";
	return "TYPE";
}

static void
note_events(struct imp *m)
{
	char text[200];
	int n = snprintf(text, sizeof(text), "sampling event %s: %llu samples",
			 m->attrs[m->chosen].name,
			 (unsigned long long)m->attrs[m->chosen].nsamples);
	for (size_t i = 0; i < m->nattrs && n > 0 && (size_t)n < sizeof(text); i++)
		if ((int)i != m->chosen)
			n += snprintf(text + n, sizeof(text) - (size_t)n, "%s%s %llu",
				      n && strchr(text, ';') ? ", " : "; not imported: ",
				      m->attrs[i].name, (unsigned long long)m->attrs[i].nsamples);
	imp_note(m, "%s", text);
}

static void
note_skipped(struct imp *m)
{
	char text[200];
	int n = 0;
	for (size_t i = 0; i < m->nskipped && (size_t)n < sizeof(text); i++)
		n += snprintf(text + n, sizeof(text) - (size_t)n, "%s%s(%u) %llu", i ? ", " : "",
			      type_name(m->skipped[i].type), m->skipped[i].type,
			      (unsigned long long)m->skipped[i].count);
	if (m->nskipped)
		imp_note(m, "records skipped by type: %s", text);
	if (m->unknown_id_samples)
		imp_note(m, "%llu samples of no known event id skipped",
			 (unsigned long long)m->unknown_id_samples);
}

int
records_finish(struct imp *m)
{
	if (m->chosen < 0 && m->nattrs && records_choose_event(m) < 0)
		return -1;
	if (order_release(m, UINT64_MAX) < 0)
		return -1;
	if (!m->target_sent && out_target(m, 0, 0) < 0)
		return -1;
	if (m->malformed) {
		struct fr_lost l = { m->max_time, m->malformed, LOST_MALFORMED };
		if (out_check(m, stream_put_lost(&m->out, &l)) < 0)
			return -1;
		imp_note(m, "%llu malformed records skipped", (unsigned long long)m->malformed);
	}
	if (m->chosen >= 0)
		note_events(m);
	note_skipped(m);
	for (size_t i = 0; i < m->nnotes; i++) {
		struct fr_warning w = { m->max_time, { m->notes[i], (uint16_t)strlen(m->notes[i]) } };
		if (out_check(m, stream_put_warning(&m->out, &w)) < 0)
			return -1;
	}
	struct fr_end e = { m->max_time, END_INPUT };
	if (out_check(m, stream_put_end(&m->out, &e)) < 0)
		return -1;
	return out_check(m, stream_flush(&m->out));
}

/* cpu_frequency of the target frame: the sampling rate when perf ran in frequency mode. */
uint32_t
records_frequency(const struct imp *m)
{
	const struct attr *a = m->chosen >= 0 ? &m->attrs[m->chosen] : NULL;
	return a && (a->flags & FLAG_FREQ) && a->period <= UINT32_MAX ? (uint32_t)a->period : 0;
}
