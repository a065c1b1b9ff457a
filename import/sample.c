/*
 * A PERF_RECORD_SAMPLE body, walked in the kernel's field order (perf_output_sample) as
 * far as the user stack, the last field import uses: IDENTIFIER, IP, TID, TIME, ADDR, ID,
 * STREAM_ID, CPU, PERIOD, READ, CALLCHAIN, RAW, BRANCH_STACK, REGS_USER, STACK_USER.
 * Every count is checked against the bytes left before it is used.
 */
#include <linux/perf_event.h>
#include <string.h>

#include "import.h"

#define ST(x) PERF_SAMPLE_##x
#define BRANCH_HW_INDEX (1ull << 17)  /* PERF_SAMPLE_BRANCH_HW_INDEX: a u64 before the entries */
#define BRANCH_COUNTERS (1ull << 19)  /* PERF_SAMPLE_BRANCH_COUNTERS: a u64 per entry after */

/* Bytes of a PERF_SAMPLE_READ body, or 0 when it does not fit. */
size_t
sample_read_size(const struct imp *m, const struct attr *a, const uint8_t *p, size_t left)
{
	uint64_t rf = a->read_format;
	size_t per = 8 * (size_t)(1 + !!(rf & PERF_FORMAT_ID) + !!(rf & (1u << 4)));
	size_t head = 8 * (size_t)__builtin_popcountll(rf & (PERF_FORMAT_TOTAL_TIME_ENABLED |
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

/* The fields after the callchain: raw data, the branch stack, user registers and stack. */
static int
tail(const struct imp *m, const struct attr *a, const uint8_t *r, size_t size, size_t o,
     struct body *b)
{
	uint64_t st = a->sample_type;
#define NEED(n) do { if (size - o < (n)) return -1; } while (0)
	if (st & ST(RAW)) {
		NEED(4);
		size_t n = bo32(m->bo, r + o);
		NEED(4 + n);
		o += 4 + n; /* the kernel pads the u32 and the data to 8 bytes */
	}
	if (st & ST(BRANCH_STACK)) {
		NEED(8);
		b->nbr = bo64(m->bo, r + o);
		o += 8;
		if (a->branch_sample_type & BRANCH_HW_INDEX) {
			NEED(8);
			o += 8;
		}
		size_t per = 24 + ((a->branch_sample_type & BRANCH_COUNTERS) ? 8 : 0);
		if (b->nbr > (size - o) / per)
			return -1;
		b->br = r + o;
		o += (size_t)b->nbr * 24;
		if (a->branch_sample_type & BRANCH_COUNTERS)
			o += (size_t)b->nbr * 8;
	}
	if (st & ST(REGS_USER)) {
		NEED(8);
		b->abi = bo64(m->bo, r + o);
		o += 8;
		if (b->abi) {
			size_t n = 8 * (size_t)__builtin_popcountll(a->sample_regs_user);
			NEED(n);
			b->regs = r + o;
			o += n;
		}
	}
	if (st & ST(STACK_USER)) {
		NEED(8);
		b->stack_size = bo64(m->bo, r + o);
		o += 8;
		if (b->stack_size) {
			if (b->stack_size > size - o || size - o - b->stack_size < 8)
				return -1;
			b->stack = r + o;
			o += b->stack_size;
			b->dyn_size = bo64(m->bo, r + o);
			if (b->dyn_size > b->stack_size)
				b->dyn_size = b->stack_size;
		}
	}
	return 0;
#undef NEED
}

int
sample_parse(const struct imp *m, const struct attr *a, const uint8_t *r, size_t size,
	     struct body *b)
{
	const struct bo bo = m->bo; /* a copy: the stores to *b could change m's as seen */
	uint64_t st = a->sample_type;
	size_t o = a->fixed_end;
	memset(b, 0, sizeof(*b));
	/* The fields up to PERIOD are a u64 each, at offsets attr_parse worked out: they fit
	 * when the last one does. */
	if (size < o)
		return -1;
	b->has_ip = (st & ST(IP)) != 0;
	if (b->has_ip)
		b->ip = bo64(bo, r + a->ip_at);
	if (st & ST(TID)) {
		b->pid = bo32(bo, r + a->tid_at);
		b->tid = bo32(bo, r + a->tid_at + 4);
	}
	if (st & ST(TIME))
		b->time = bo64(bo, r + a->time_at);
	if (st & ST(CPU))
		b->cpu = bo32(bo, r + a->cpu_at);
	b->has_period = (st & ST(PERIOD)) != 0;
	if (b->has_period)
		b->period = bo64(bo, r + a->period_at);
#define NEED(n) do { if (size - o < (n)) return -1; } while (0)
	if (st & ST(READ)) {
		size_t n = sample_read_size(m, a, r + o, size - o);
		if (n == 0)
			return -1;
		b->read = r + o;
		b->read_len = n;
		o += n;
	}
	if (st & ST(CALLCHAIN)) {
		NEED(8);
		b->nr = bo64(bo, r + o);
		o += 8;
		if (b->nr > (size - o) / 8)
			return -1;
		b->chain = r + o;
		o += 8 * (size_t)b->nr;
	}
	if (!(st & (ST(RAW) | ST(BRANCH_STACK) | ST(REGS_USER) | ST(STACK_USER))))
		return 0;
	return tail(m, a, r, size, o, b);
#undef NEED
}

/* The values of a READ body in order: the event's own, or each group member's. */
size_t
sample_read_values(const struct imp *m, const struct attr *a, const struct body *b,
		   struct readent *out, size_t max)
{
	uint64_t rf = a->read_format;
	size_t head = 8 * (size_t)__builtin_popcountll(rf & (PERF_FORMAT_TOTAL_TIME_ENABLED |
							     PERF_FORMAT_TOTAL_TIME_RUNNING));
	size_t per = 8 * (size_t)(1 + !!(rf & PERF_FORMAT_ID) + !!(rf & (1u << 4)));
	const uint8_t *p = b->read;
	size_t n = 1;
	if (!p)
		return 0;
	if (rf & PERF_FORMAT_GROUP) {
		n = (size_t)bo64(m->bo, p);
		p += 8 + head;
	}
	if (n > max)
		n = max;
	for (size_t i = 0; i < n; i++, p += per) {
		out[i].value = bo64(m->bo, p);
		/* a single value has the times between it and its id */
		size_t at = (rf & PERF_FORMAT_GROUP) ? 8 : 8 + head;
		out[i].id = (rf & PERF_FORMAT_ID) ? bo64(m->bo, p + at) : 0;
		if (!(rf & PERF_FORMAT_GROUP))
			break;
	}
	return n;
}
