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

#define ST(x) PERF_SAMPLE_##x
#define FLAG_FREQ (1ull << 10)
#define FLAG_SAMPLE_ID_ALL (1ull << 18)
#define MISC_MMAP_DATA 0x2000
#define MISC_MMAP_BUILD_ID 0x4000
#define MISC_COMM_EXEC 0x2000
#define PID_KERNEL 0xffffffffu

static int
put(struct imp *m, int rc)
{
	return out_check(m, rc);
}

static int
popcount(uint64_t v)
{
	return __builtin_popcountll(v);
}

/* The attribute a sample belongs to: by its id when the capture has several. */
static int
sample_attr(struct imp *m, const uint8_t *r, size_t size)
{
	uint64_t st = m->attrs[0].sample_type;
	size_t pos;
	if (m->nattrs == 1)
		return 0;
	if (st & ST(IDENTIFIER))
		pos = 8;
	else if (st & ST(ID))
		pos = 8 + 8 * (size_t)popcount(st & (ST(IP) | ST(TID) | ST(TIME) | ST(ADDR)));
	else
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
	*tsize = 8 * (size_t)popcount(st & (ST(TID) | ST(TIME) | ST(ID) | ST(STREAM_ID) |
					    ST(CPU) | ST(IDENTIFIER)));
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
	uint64_t st = i >= 0 ? m->attrs[i].sample_type : 0;
	size_t at = 8 + 8 * (size_t)popcount(st & (ST(IDENTIFIER) | ST(IP) | ST(TID)));
	return (st & ST(TIME)) && at + 8 <= size ? bo64(m->bo, r + at) : 0;
}

/* Bytes of a PERF_SAMPLE_READ body, or 0 when it does not fit. */
static size_t
read_size(struct imp *m, const struct attr *a, const uint8_t *p, size_t left)
{
	uint64_t rf = a->read_format;
	size_t per = 8 * (size_t)(1 + !!(rf & PERF_FORMAT_ID) + !!(rf & (1u << 4)));
	size_t head = 8 * (size_t)popcount(rf & (PERF_FORMAT_TOTAL_TIME_ENABLED |
						  PERF_FORMAT_TOTAL_TIME_RUNNING));
	if (!(rf & PERF_FORMAT_GROUP))
		return per + head <= left ? per + head : 0;
	if (left < 8 + head)
		return 0;
	uint64_t nr = bo64(m->bo, p);
	if (nr > (left - 8 - head) / per)
		return 0;
	return 8 + head + (size_t)nr * per;
}

/* Kernel ips, then user ips, leaf first; other contexts (hypervisor, guest) are left out. */
static void
split_chain(struct imp *m, struct fr_sample *s, const uint8_t *chain, uint64_t nr,
	    int kernel_first)
{
	static uint64_t user[STREAM_MAX_IPS];
	size_t nk = 0, nu = 0;
	int mode = kernel_first ? 1 : 2;
	for (uint64_t i = 0; i < nr && nk + nu < STREAM_MAX_IPS; i++) {
		uint64_t ip = bo64(m->bo, chain + 8 * i);
		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			mode = ip == (uint64_t)PERF_CONTEXT_KERNEL ? 1 :
			       ip == (uint64_t)PERF_CONTEXT_USER ? 2 : 0;
			continue;
		}
		if (mode == 1)
			s->ips[nk++] = ip;
		else if (mode == 2)
			user[nu++] = ip;
	}
	memcpy(s->ips + nk, user, nu * sizeof(*user));
	s->nkernel = (uint16_t)nk;
	s->nuser = (uint16_t)nu;
}

struct body {
	uint64_t ip, nr;
	const uint8_t *chain;
	int has_period;
};

/* Walks the sample body in perf's field order up to the callchain, the last field used. */
static int
sample_body(struct imp *m, const struct attr *a, const uint8_t *r, size_t size,
	    struct fr_sample *s, struct body *b)
{
	uint64_t st = a->sample_type;
	size_t o = 8;
#define NEED(n) do { if (size - o < (n)) return -1; } while (0)
#define SKIP(bit) do { if (st & (bit)) { NEED(8); o += 8; } } while (0)
	SKIP(ST(IDENTIFIER));
	if (st & ST(IP)) {
		NEED(8);
		b->ip = bo64(m->bo, r + o);
		o += 8;
	}
	if (st & ST(TID)) {
		NEED(8);
		s->pid = bo32(m->bo, r + o);
		s->tid = bo32(m->bo, r + o + 4);
		o += 8;
	}
	if (st & ST(TIME)) {
		NEED(8);
		s->time = bo64(m->bo, r + o);
		o += 8;
	}
	SKIP(ST(ADDR));
	SKIP(ST(ID));
	SKIP(ST(STREAM_ID));
	if (st & ST(CPU)) {
		NEED(8);
		s->cpu = bo32(m->bo, r + o);
		o += 8;
	}
	if (st & ST(PERIOD)) {
		NEED(8);
		s->period = bo64(m->bo, r + o);
		b->has_period = 1;
		o += 8;
	}
	if (st & ST(READ)) {
		size_t n = read_size(m, a, r + o, size - o);
		if (n == 0)
			return -1;
		o += n;
	}
	if (st & ST(CALLCHAIN)) {
		NEED(8);
		b->nr = bo64(m->bo, r + o);
		if (b->nr > (size - o - 8) / 8)
			return -1;
		b->chain = r + o + 8;
	}
	return 0;
#undef NEED
#undef SKIP
}

static int
on_sample(struct imp *m, const uint8_t *r, size_t size)
{
	int i = sample_attr(m, r, size);
	if (i < 0) {
		m->unknown_id_samples++;
		return 0;
	}
	m->attrs[i].nsamples++;
	if (i != m->chosen)
		return 0;
	const struct attr *a = &m->attrs[i];
	struct fr_sample *s = &m->sample;
	struct body b = { 0 };
	s->pid = s->tid = s->cpu = 0;
	s->time = s->period = 0;
	if (sample_body(m, a, r, size, s, &b) < 0) {
		m->attrs[i].nsamples--;
		m->malformed++;
		return 0;
	}
	/* perf record -c N writes no period: every sample is worth the fixed one. */
	if (!b.has_period)
		s->period = (a->flags & FLAG_FREQ) ? 1 : a->period;
	int in_kernel = (bo16(m->bo, r + 4) & PERF_RECORD_MISC_CPUMODE_MASK) ==
			PERF_RECORD_MISC_KERNEL;
	split_chain(m, s, b.chain, b.nr, in_kernel);
	if (s->nkernel + s->nuser == 0) {
		s->ips[0] = b.ip;
		s->nkernel = in_kernel ? 1 : 0;
		s->nuser = in_kernel ? 0 : 1;
	}
	if (!m->target_sent && out_target(m, s->time, s->pid) < 0)
		return -1;
	if (s->time > m->max_time)
		m->max_time = s->time;
	return put(m, stream_put_sample(&m->out, s));
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
	/* Kernel and module maps are the kernel's business; data maps hold no code, except
	 * that simpleperf's offline unwinder puts interpreted Java frames in dex/vdex maps. */
	if (f.pid == PID_KERNEL || (misc & PERF_RECORD_MISC_CPUMODE_MASK) ==
	    PERF_RECORD_MISC_KERNEL || (misc & MISC_MMAP_DATA) || (!(f.prot & PROT_EXEC) && !m->simpleperf) ||
	    f.start + f.len < f.start)
		return 0;
	if (type == PERF_RECORD_MMAP2 && (misc & MISC_MMAP_BUILD_ID)) {
		f.build_id_len = r[40] <= STREAM_BUILD_ID_MAX ? r[40] : STREAM_BUILD_ID_MAX;
		memcpy(f.build_id, r + 44, f.build_id_len);
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
records_handle(struct imp *m, uint32_t type, const uint8_t *r, size_t size, uint64_t off)
{
	(void)off;
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
