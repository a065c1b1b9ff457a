/*
 * perf's kernel records into stream frames, the way collect/records.c turns its own ring
 * buffer records into them, except that the layout of each record follows the capture's
 * attributes instead of a fixed sample_type.  A record whose fields do not fit its size is
 * counted as malformed and skipped, as collect does; only the container's framing is fatal.
 */
#include <linux/perf_event.h>
#include <string.h>
#include <sys/mman.h>

#include "import.h"

#define PATH_KERNEL "[kernel.kallsyms]"

#define ST(x) PERF_SAMPLE_##x
#define FLAG_FREQ (1ull << 10)
#define FLAG_SAMPLE_ID_ALL (1ull << 18)
#define MISC_MMAP_DATA 0x2000
#define MISC_MMAP_BUILD_ID 0x4000
#define MISC_COMM_EXEC 0x2000
#define PID_KERNEL 0xffffffffu

/* Inline: every frame passes here, and nearly all are written. */
static inline int
put(struct imp *m, int rc)
{
	return rc < 0 ? out_check(m, rc) : 0;
}

/* The attribute a sample belongs to: by its id when the capture has several. */
static int
sample_attr(struct imp *m, const uint8_t *r, size_t size)
{
	size_t pos = m->attrs[0].id_at;
	if (m->nattrs == 1 || pos == 0)
		return 0; /* nothing to tell them apart: perf takes the first */
	return pos + 8 <= size ? ids_find(m, bo64(m->bo, r + pos)) : -1;
}

/* The sample_id trailer of a non-sample record: its time, or 0 when it has none. */
static uint64_t
trailer_time(struct imp *m, const uint8_t *r, size_t size, size_t *tsize)
{
	const struct attr *a = &m->attrs[0];
	if (m->nattrs > 1 && (a->sample_type & ST(IDENTIFIER)) && size >= 16) {
		int i = ids_find(m, bo64(m->bo, r + size - 8));
		if (i >= 0)
			a = &m->attrs[i];
	}
	*tsize = 0;
	if (!(a->flags & FLAG_SAMPLE_ID_ALL))
		return 0;
	uint64_t st = a->sample_type;
	*tsize = a->sid_size;
	if (!(st & ST(TIME)) || size < 8 + *tsize)
		return 0;
	return bo64(m->bo, r + size - *tsize + ((st & ST(TID)) ? 8 : 0));
}

/* The time a record is replayed at: the sample's TIME, a fork or exit's own time, the
 * sample_id trailer's time; 0 (first) for records without one, such as perf's synthesized
 * start-up maps. */
uint64_t
records_time(struct imp *m, uint32_t type, const uint8_t *r, size_t size)
{
	size_t ts;
	if (type == PERF_RECORD_FORK || type == PERF_RECORD_EXIT)
		return size >= 32 ? bo64(m->bo, r + 24) : 0;
	if (type != PERF_RECORD_SAMPLE)
		return trailer_time(m, r, size, &ts);
	int i = sample_attr(m, r, size);
	if (i < 0 || !(m->attrs[i].sample_type & ST(TIME)))
		return 0;
	size_t at = m->attrs[i].time_at;
	return at + 8 <= size ? bo64(m->bo, r + at) : 0;
}

/* Samples of the event counted for the default choice: each sample's own event, and with
 * PERF_SAMPLE_READ each event whose value it reads. */
void
records_count_sample(struct imp *m, const uint8_t *r, size_t size)
{
	static struct readent v[IMP_MAX_ATTRS];
	struct body b;
	int i = sample_attr(m, r, size);
	if (i < 0)
		return;
	const struct attr *a = &m->attrs[i];
	if (!(a->sample_type & ST(READ)) || !(a->read_format & PERF_FORMAT_ID)) {
		m->attrs[i].seen++;
		return;
	}
	if (sample_parse(m, a, r, size, &b) < 0)
		return;
	size_t n = sample_read_values(m, a, &b, v, IMP_MAX_ATTRS);
	for (size_t k = 0; k < n; k++) {
		int j = ids_find(m, v[k].id);
		if (j >= 0)
			m->attrs[j].seen++;
	}
}

/* Registers and a stack copy a CFI walk can use: perf record --call-graph dwarf leaves the
 * user part of the callchain out (exclude_callchain_user), so these are the user stack. */
static int
regs_usable(const struct imp *m, const struct attr *a, const struct body *b,
	    const struct fr_sample *s)
{
	return (a->sample_type & ST(REGS_USER)) && (a->sample_type & ST(STACK_USER)) &&
	       b->abi == PERF_SAMPLE_REGS_ABI_64 && b->regs && b->dyn_size > 0 && !m->bo.swap &&
	       (m->e_machine == 62 || m->e_machine == 183) && s->nuser <= 1 &&
	       __builtin_popcountll(a->sample_regs_user) <= STREAM_MAX_REGS;
}

static int
put_regs(struct imp *m, const struct attr *a, const struct body *b, const struct fr_sample *s)
{
	static struct fr_sample_regs sr;
	sr.time = s->time;
	sr.pid = s->pid;
	sr.tid = s->tid;
	sr.cpu = s->cpu;
	sr.abi = (uint32_t)b->abi;
	sr.period = s->period;
	sr.nkernel = s->nkernel;
	memcpy(sr.kips, s->ips, s->nkernel * sizeof(*s->ips));
	sr.reg_mask = a->sample_regs_user;
	sr.nregs = (uint16_t)__builtin_popcountll(a->sample_regs_user);
	for (unsigned i = 0; i < sr.nregs; i++)
		sr.regs[i] = bo64(m->bo, b->regs + 8 * i);
	sr.stack_len = (uint32_t)(b->dyn_size < STREAM_MAX_STACK ? b->dyn_size : STREAM_MAX_STACK);
	sr.stack = b->stack;
	return put(m, stream_put_sample_regs(&m->out, &sr));
}

/* One sample of the profile, worth period: the target frame and the kernel symbols it
 * needs first, then the sample, as registers and stack when there are. */
static int
emit(struct imp *m, const struct attr *a, const struct body *b, uint16_t misc, uint64_t period)
{
	struct fr_sample *s = &m->sample;
	s->pid = b->pid;
	s->tid = b->tid;
	s->cpu = b->cpu;
	s->time = b->time;
	s->period = period;
	stack_build(m, a, b, misc, s);
	if (!m->target_sent && out_target(m, s->time, s->pid) < 0)
		return -1;
	if (m->retarget && s->pid == m->first_pid && out_retarget(m) < 0)
		return -1;
	if (s->time > m->max_time)
		m->max_time = s->time;
	if (s->nkernel && kallsyms_frames(m, s->ips, s->nkernel) < 0)
		return -1;
	if (regs_usable(m, a, b, s))
		return put_regs(m, a, b, s);
	return put(m, stream_put_sample(&m->out, s));
}

/* A sample that reads counters: one sample per value, of the value's event, weighing the
 * count's growth (readval.c). */
static int
read_values(struct imp *m, const struct attr *a, const struct body *b, uint16_t misc)
{
	static struct readent v[IMP_MAX_ATTRS];
	size_t n = sample_read_values(m, a, b, v, IMP_MAX_ATTRS);
	for (size_t k = 0; k < n; k++) {
		int j = ids_find(m, v[k].id);
		uint64_t d;
		if (j < 0) {
			m->unknown_id_samples++;
			continue;
		}
		if (readval_delta(m, &m->attrs[j], v[k].id, b->tid, v[k].value, &d) < 0)
			return -1;
		m->attrs[j].nsamples++;
		if (m->attrs[j].selected && emit(m, a, b, misc, d) < 0)
			return -1;
	}
	return 0;
}

static int
on_sample(struct imp *m, const uint8_t *r, size_t size)
{
	int i = sample_attr(m, r, size);
	if (i < 0) {
		m->unknown_id_samples++;
		return 0;
	}
	if (m->chosen < 0 && events_choose(m) < 0)
		return -1;
	struct attr *a = &m->attrs[i];
	int reads = (a->sample_type & ST(READ)) && (a->read_format & PERF_FORMAT_ID);
	struct body b;
	if (!reads && !a->selected) {
		a->nsamples++;
		return 0;
	}
	if (sample_parse(m, a, r, size, &b) < 0) {
		m->malformed++;
		return 0;
	}
	uint16_t misc = bo16(m->bo, r + 4);
	if (reads)
		return read_values(m, a, &b, misc);
	a->nsamples++;
	/* perf record -c N writes no period: every sample is worth the fixed one. */
	uint64_t period = b.has_period ? b.period : (a->flags & FLAG_FREQ) ? 1 : a->period;
	return emit(m, a, &b, misc, period);
}

/* A NUL-terminated name in r[at, end); -1 when it is missing or unterminated. */
static int
name_in(const uint8_t *r, size_t at, size_t end, struct str *out)
{
	if (at >= end)
		return -1;
	size_t n = strnlen((const char *)r + at, end - at);
	if (n == end - at)
		return -1;
	out->p = (const char *)r + at;
	out->len = (uint16_t)(n < STREAM_MAX_STR ? n : STREAM_MAX_STR - 1);
	return 0;
}

/* [kernel.kallsyms]_text at its pgoff: the relocation symbol and its address, from which
 * a kallsyms of another boot is shifted; a 32-bit kernel's map says where it starts. */
static void
kernel_map(struct imp *m, const struct fr_mmap *f)
{
	size_t n = sizeof(PATH_KERNEL) - 1;
	if (f->path.len < n || memcmp(f->path.p, PATH_KERNEL, n))
		return;
	if (f->path.len > n && f->path.len - n < sizeof(m->kref_name)) {
		memcpy(m->kref_name, f->path.p + n, f->path.len - n);
		m->kref_name[f->path.len - n] = 0;
		m->kref_addr = f->pgoff;
	}
	/* 64-bit kernels live above 2^63 (perf's machine__get_kernel_start) */
	if (f->start && m->e_machine != 62 && m->e_machine != 183 &&
	    (!m->kernel_start || f->start < m->kernel_start))
		m->kernel_start = f->start;
}

static int
on_mmap(struct imp *m, uint32_t type, const uint8_t *r, size_t size)
{
	size_t ts, at = type == PERF_RECORD_MMAP2 ? 72 : 40;
	uint16_t misc = bo16(m->bo, r + 4);
	struct fr_mmap f = { .time = trailer_time(m, r, size, &ts) };
	if (size < at + ts || name_in(r, at, size - ts, &f.path) < 0) {
		m->malformed++;
		return 0;
	}
	f.pid = bo32(m->bo, r + 8);
	f.tid = bo32(m->bo, r + 12);
	f.start = bo64(m->bo, r + 16);
	f.len = bo64(m->bo, r + 24);
	f.pgoff = bo64(m->bo, r + 32);
	f.prot = PROT_READ | PROT_EXEC;
	if (type == PERF_RECORD_MMAP2) {
		f.prot = bo32(m->bo, r + 64);
		f.flags = bo32(m->bo, r + 68);
	}
	/* Kernel and module maps are the kernel's business (the kernel's own says where its
	 * addresses start); data maps hold no code, except that simpleperf's offline unwinder
	 * puts interpreted Java frames in dex/vdex maps. */
	if (f.pid == PID_KERNEL || (misc & PERF_RECORD_MISC_CPUMODE_MASK) ==
	    PERF_RECORD_MISC_KERNEL) {
		kernel_map(m, &f);
		return 0;
	}
	if ((misc & MISC_MMAP_DATA) || (!(f.prot & PROT_EXEC) && !m->simpleperf) ||
	    f.start + f.len < f.start)
		return 0;
	if ((f.prot & PROT_EXEC) && f.path.len && f.path.p[0] == '/' &&
	    procs_exe(m, f.pid, f.path) < 0)
		return imp_fail(m, 0, "out of memory");
	if (type == PERF_RECORD_MMAP2 && (misc & MISC_MMAP_BUILD_ID)) {
		f.build_id_len = r[40] <= STREAM_BUILD_ID_MAX ? r[40] : STREAM_BUILD_ID_MAX;
		memcpy(f.build_id, r + 44, f.build_id_len);
		if (features_zero_id(f.build_id, f.build_id_len))
			f.build_id_len = 0;
	} else {
		const struct buildid *b = features_find_buildid(m, f.path.p, f.path.len);
		if (b) {
			f.build_id_len = b->len;
			memcpy(f.build_id, b->id, b->len);
		}
	}
	return put(m, stream_put_mmap(&m->out, &f));
}

static int
on_comm(struct imp *m, const uint8_t *r, size_t size)
{
	size_t ts;
	struct fr_comm f = { .time = trailer_time(m, r, size, &ts) };
	if (size < 16 + ts || name_in(r, 16, size - ts, &f.comm) < 0) {
		m->malformed++;
		return 0;
	}
	f.pid = bo32(m->bo, r + 8);
	f.tid = bo32(m->bo, r + 12);
	f.flags = (bo16(m->bo, r + 4) & MISC_COMM_EXEC) ? COMM_EXEC : 0;
	if (procs_comm(m, f.pid, f.tid, f.comm, f.flags & COMM_EXEC) < 0)
		return imp_fail(m, 0, "out of memory");
	if (m->target_sent && f.pid == m->first_pid && (f.flags & COMM_EXEC))
		m->retarget = 1;
	return put(m, stream_put_comm(&m->out, &f));
}

static int
on_task(struct imp *m, uint32_t type, const uint8_t *r, size_t size)
{
	if (size < 32) {
		m->malformed++;
		return 0;
	}
	struct fr_task t = {
		.pid = bo32(m->bo, r + 8), .ppid = bo32(m->bo, r + 12),
		.tid = bo32(m->bo, r + 16), .ptid = bo32(m->bo, r + 20),
		.time = bo64(m->bo, r + 24),
	};
	return put(m, stream_put_task(&m->out, type == PERF_RECORD_FORK ? FR_FORK : FR_EXIT, &t));
}

/* LOST {id, lost}, LOST_SAMPLES {lost}, THROTTLE {time, id, stream_id}: as collect does. */
static int
on_lost(struct imp *m, uint32_t type, const uint8_t *r, size_t size)
{
	size_t ts, min = type == PERF_RECORD_LOST ? 24 : type == PERF_RECORD_THROTTLE ? 32 : 16;
	struct fr_lost l = { .time = trailer_time(m, r, size, &ts), .count = 1,
			     .kind = LOST_THROTTLED };
	if (size < min) {
		m->malformed++;
		return 0;
	}
	if (type == PERF_RECORD_LOST)
		l = (struct fr_lost){ l.time, bo64(m->bo, r + 16), LOST_RECORDS };
	else if (type == PERF_RECORD_LOST_SAMPLES)
		l = (struct fr_lost){ l.time, bo64(m->bo, r + 8), LOST_RECORDS };
	return l.count ? put(m, stream_put_lost(&m->out, &l)) : 0;
}

int
records_handle(struct imp *m, uint32_t type, const uint8_t *r, size_t size)
{
	switch (type) {
	case PERF_RECORD_SAMPLE:
		return on_sample(m, r, size);
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return on_mmap(m, type, r, size);
	case PERF_RECORD_COMM:
		return on_comm(m, r, size);
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		return on_task(m, type, r, size);
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
	case PERF_RECORD_THROTTLE:
		return on_lost(m, type, r, size);
	default:
		records_skip(m, type);
		return 0;
	}
}

void
records_skip(struct imp *m, uint32_t type)
{
	for (size_t i = 0; i < m->nskipped; i++)
		if (m->skipped[i].type == type) {
			m->skipped[i].count++;
			return;
		}
	if (m->nskipped < IMP_MAX_TYPES)
		m->skipped[m->nskipped++] = (struct skipped){ type, 1 };
}

/* perf's FINISHED_ROUND: nothing after it is older than the newest event before the
 * previous one, which is exactly what FR_ROUND promises. */
int
records_round(struct imp *m)
{
	uint64_t t = m->round_time;
	m->round_time = m->order.newest;
	if (order_release(m, t) < 0)
		return -1;
	if (!m->target_sent || t <= m->last_round)
		return 0;
	m->last_round = t;
	struct fr_round f = { t };
	return put(m, stream_put_round(&m->out, &f));
}
