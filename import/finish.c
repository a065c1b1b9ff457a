/*
 * The end of a capture: the last queued records, then the closing warnings (which event was
 * imported and what was left out) and the end frame.
 */
#include <stdio.h>
#include <string.h>

#include "import.h"

#define FLAG_FREQ (1ull << 10)

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

/* "sampling event cycles (cpu_core/cycles/ 1200, cpu_atom/cycles/ 0): 1200 samples; not
 * imported: instructions 10". */
static void
note_events(struct imp *m)
{
	char text[200], parts[120] = "";
	uint64_t total = 0;
	size_t nsel = 0;
	for (size_t i = 0; i < m->nattrs; i++)
		nsel += m->attrs[i].selected;
	for (size_t i = 0; i < m->nattrs; i++) {
		const struct attr *a = &m->attrs[i];
		if (!a->selected)
			continue;
		total += a->nsamples;
		if (nsel > 1)
			snprintf(parts + strlen(parts), sizeof(parts) - strlen(parts), "%s%s %llu",
				 parts[0] ? ", " : " (", a->name, (unsigned long long)a->nsamples);
	}
	if (parts[0])
		snprintf(parts + strlen(parts), sizeof(parts) - strlen(parts), ")");
	const struct attr *c = &m->attrs[m->chosen];
	int n = snprintf(text, sizeof(text), "sampling event %s%s: %llu samples",
			 nsel > 1 ? c->base : c->name, parts, (unsigned long long)total);
	for (size_t i = 0, first = 1; i < m->nattrs && n > 0 && (size_t)n < sizeof(text); i++)
		if (!m->attrs[i].selected) {
			n += snprintf(text + n, sizeof(text) - (size_t)n, "%s%s %llu",
				      first ? "; not imported: " : ", ", m->attrs[i].name,
				      (unsigned long long)m->attrs[i].nsamples);
			first = 0;
		}
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
	if (m->nattrs && events_choose(m) < 0)
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
	if (kallsyms_finish(m) < 0)
		return -1;
	kallsyms_note(m);
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
