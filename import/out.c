/*
 * The output side: the stream header (opened once the capture's arch and clock are known),
 * the target frame before the first sample, and errors that name the capture offset.
 */
#include <elf.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "import.h"

#define FLAG_USE_CLOCKID (1ull << 25)

int
imp_init(struct imp *m, int out_fd)
{
	memset(m, 0, sizeof(*m));
	m->out_fd = out_fd;
	m->chosen = -1;
	m->src.fd = -1;
	kallsyms_init(&m->ks);
	return 0;
}

void
imp_release(struct imp *m)
{
	for (size_t i = 0; i < sizeof(m->bids) / sizeof(m->bids[0]); i++)
		while (m->bids[i]) {
			struct buildid *n = m->bids[i]->next;
			free(m->bids[i]);
			m->bids[i] = n;
		}
	free(m->ids);
	readval_release(m);
	procs_release(m);
	kallsyms_release(&m->ks);
	free(m->ksyms);
	free(m->sp_file);
	usym_release(m);
	free(m->zbuf);
	zstd_release(m);
	order_free(m);
	if (m->opened)
		stream_writer_release(&m->out);
	src_close(&m->src);
}

int
imp_fail(struct imp *m, uint64_t off, const char *fmt, ...)
{
	char msg[240];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (m->err[0])
		return -1; /* the first reason is the one to report */
	if (m->in_z)
		snprintf(m->err, sizeof(m->err), "offset %llu (compressed record at %llu): %s",
			 (unsigned long long)off, (unsigned long long)m->zoff, msg);
	else
		snprintf(m->err, sizeof(m->err), "offset %llu: %s", (unsigned long long)off, msg);
	return -1;
}

void
imp_note(struct imp *m, const char *fmt, ...)
{
	if (m->nnotes == sizeof(m->notes) / sizeof(m->notes[0]))
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = snprintf(m->notes[m->nnotes], sizeof(m->notes[0]), "import: ");
	vsnprintf(m->notes[m->nnotes] + n, sizeof(m->notes[0]) - (size_t)n, fmt, ap);
	va_end(ap);
	m->nnotes++;
}

static uint32_t
machine(const char *arch)
{
	if (!strcmp(arch, "x86_64"))
		return EM_X86_64;
	if (!strcmp(arch, "aarch64") || !strcmp(arch, "arm64"))
		return EM_AARCH64;
	if (arch[0] == 'i' && !strcmp(arch + 2, "86"))
		return EM_386;
	if (!strncmp(arch, "arm", 3))
		return EM_ARM;
	return EM_NONE;
}

/* The header's clock: the event's own (use_clockid), which perf sets alike on every event
 * of a session, else CLOCK_DATA's; the chosen event's when it is known. */
static const struct attr *
clock_attr(const struct imp *m)
{
	if (m->chosen >= 0 && (m->attrs[m->chosen].flags & FLAG_USE_CLOCKID))
		return &m->attrs[m->chosen];
	for (size_t i = 0; i < m->nattrs; i++)
		if (m->attrs[i].flags & FLAG_USE_CLOCKID)
			return &m->attrs[i];
	return NULL;
}

int
out_open(struct imp *m)
{
	if (m->opened)
		return 0;
	const struct attr *a = clock_attr(m);
	struct stream_header h = {
		.version = STREAM_VERSION, .clockid = CLOCK_MONOTONIC,
		.clock_offset_ns = m->have_clock_data ? m->clock_offset : 0,
		.session_id = m->session_id, .e_machine = machine(m->arch),
	};
	m->e_machine = h.e_machine;
	/* Where kernel addresses start: above 2^63 on a 64-bit machine; a 32-bit kernel's
	 * own map says (records.c), until then the header's cpumode decides. */
	if (h.e_machine != EM_386 && h.e_machine != EM_ARM)
		m->kernel_start = 1ull << 63;
	if (a && a->clockid >= 0)
		h.clockid = (uint32_t)a->clockid;
	else if (m->have_clock_data)
		h.clockid = m->clockid;
	if (stream_writer_open(&m->out, m->out_fd, "stdout", &h) < 0)
		return imp_fail(m, 0, "%s", m->out.err);
	m->opened = 1;
	return 0;
}

int
out_check(struct imp *m, int rc)
{
	if (rc < 0)
		return imp_fail(m, 0, "cannot write stdout: %s", m->out.err);
	return 0;
}

/* How the capture's user stacks are read: perf record --call-graph dwarf keeps registers
 * and a stack copy per sample, which unwind walks with the modules' CFI; an LBR call stack
 * replaces the frame-pointer walk; anything else is the callchain as recorded. */
static void
unwind_how(const struct imp *m, struct fr_target *t)
{
	const struct attr *a = m->chosen >= 0 ? &m->attrs[m->chosen] : NULL;
	uint64_t st = a ? a->sample_type : 0;
	t->unwind_requested = t->unwind_mode = str_of("fp");
	t->unwind_reason = str_of("import: callchains as recorded");
	if ((st & PERF_SAMPLE_REGS_USER) && (st & PERF_SAMPLE_STACK_USER) && a->sample_stack_user) {
		t->unwind_requested = t->unwind_mode = str_of("dwarf");
		t->unwind_reason = str_of("import: user stacks unwound from the captured registers "
					  "and stack copies with the modules' CFI");
	} else if ((st & PERF_SAMPLE_BRANCH_STACK) &&
		   (a->branch_sample_type & PERF_SAMPLE_BRANCH_CALL_STACK)) {
		t->unwind_reason = str_of("import: user stacks from the LBR call stack");
	}
}

static int
put_target(struct imp *m, uint64_t time, uint32_t pid)
{
	const struct procent *p = procs_find(m, pid);
	struct fr_target t = {
		.pid = pid, .cpu_frequency = records_frequency(m), .start_time = time,
		.kind = str_of("import"), .profiles = str_of("cpu"),
		.kernel_release = str_of(m->osrelease),
		.comm = str_of(p ? p->comm : ""), .exe = str_of(p && p->exe ? p->exe : ""),
	};
	const char *type, *unit;
	unwind_how(m, &t);
	events_unit(m, &type, &unit);
	t.sample_type = str_of(type);
	t.sample_unit = str_of(unit);
	return out_open(m) < 0 ? -1 : out_check(m, stream_put_target(&m->out, &t));
}

int
out_target(struct imp *m, uint64_t time, uint32_t pid)
{
	if (put_target(m, time, pid) < 0)
		return -1;
	m->target_sent = 1;
	m->first_pid = pid;
	m->target_start = time;
	if (!m->have_clock_data)
		imp_note(m, "the capture does not relate its clock to wall time: times are "
			 "the capture's clock, with a clock offset of 0");
	for (size_t i = 0; i < m->nksyms; i++)
		if (out_check(m, stream_put_ksym(&m->out, &m->ksyms[i])) < 0)
			return -1;
	return usym_emit(m);
}

/* After the target executed a new image (perf record's child becomes the command), a new
 * target frame names it, as collect writes one after an exec. */
int
out_retarget(struct imp *m)
{
	m->retarget = 0;
	return put_target(m, m->target_start, m->first_pid);
}
