/*
 * The output side: the stream header (opened once the capture's arch and clock are known),
 * the target frame before the first sample, and errors that name the capture offset.
 */
#include <elf.h>
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

int
out_open(struct imp *m)
{
	if (m->opened)
		return 0;
	const struct attr *a = m->chosen >= 0 ? &m->attrs[m->chosen] : NULL;
	struct stream_header h = {
		.version = STREAM_VERSION, .clockid = CLOCK_MONOTONIC,
		.clock_offset_ns = m->have_clock_data ? m->clock_offset : 0,
		.session_id = m->session_id, .e_machine = machine(m->arch),
	};
	if (a && (a->flags & FLAG_USE_CLOCKID) && a->clockid >= 0)
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

int
out_target(struct imp *m, uint64_t time, uint32_t pid)
{
	struct fr_target t = {
		.pid = pid, .cpu_frequency = records_frequency(m), .start_time = time,
		.kind = str_of("import"), .unwind_requested = str_of("fp"),
		.unwind_mode = str_of("fp"), .unwind_reason = str_of("import: callchains as recorded"),
		.profiles = str_of("cpu"), .kernel_release = str_of(m->osrelease),
	};
	if (out_open(m) < 0 || out_check(m, stream_put_target(&m->out, &t)) < 0)
		return -1;
	m->target_sent = 1;
	m->first_pid = pid;
	if (!m->have_clock_data)
		imp_note(m, "the capture does not relate its clock to wall time: times are "
			 "the capture's clock, with a clock offset of 0");
	for (size_t i = 0; i < m->nksyms; i++)
		if (out_check(m, stream_put_ksym(&m->out, &m->ksyms[i])) < 0)
			return -1;
	return usym_emit(m);
}
