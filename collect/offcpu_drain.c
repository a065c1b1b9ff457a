/*
 * The drain of the off-CPU collector: threads still off the CPU (the "starts" map) are
 * reported up to the round, then finished intervals (the ring buffer) from where their
 * report stopped, then the program's loss counters as FR_LOST.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <err.h>
#include <stdlib.h>
#include <string.h>

#include "offcpu_priv.h"

#define OPEN_CAP (2 * OFFCPU_MAX_THREADS)

_Static_assert(BATCH_TOP_WORDS == OFFCPU_TOP_WORDS, "a piece carries the program's words");
/* The program reads the stack top on x86_64 only (bpf/offcpu.bpf.c): elsewhere the words are
 * zero and are not sent. */
#if defined(__x86_64__)
#define TOP_SENT BATCH_TOP_WORDS
#else
#define TOP_SENT 0
#endif

static struct open_slot *
open_find(struct opentab *t, uint32_t tid, int create)
{
	if (!t->slots) {
		if (!create)
			return NULL;
		t->slots = calloc(OPEN_CAP, sizeof(*t->slots));
		if (!t->slots)
			errx(1, "out of memory");
		t->cap = OPEN_CAP;
	}
	/* Fibonacci hashing; at most half full, so a probe always ends. */
	for (size_t i = (tid * 2654435769u) & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
		struct open_slot *s = &t->slots[i];
		if (s->gen != t->gen) {
			if (!create)
				return NULL;
			*s = (struct open_slot){ .tid = tid, .gen = t->gen };
			return s;
		}
		if (s->tid == tid)
			return s;
	}
}

/* Reads stack id into ips (OFFCPU_MAX_DEPTH, the end zero-filled); 0 or -1. */
static int
stack_read(struct offcpu *o, __s32 id, __u64 *ips)
{
	static struct offcpu_ustack u;
	if (id < OFFCPU_STACK_SLOTS)
		return bpf_map_lookup_elem(o->stacks_fd, &id, ips) != 0 ? -1 : 0;
	__u32 slot = (__u32)(id - OFFCPU_STACK_SLOTS);
	if (bpf_map_lookup_elem(o->ustacks_fd, &slot, &u) != 0)
		return -1;
	uint32_t n = u.nr < OFFCPU_MAX_DEPTH ? u.nr : OFFCPU_MAX_DEPTH;
	memcpy(ips, u.ips, n * sizeof(ips[0]));
	memset(ips + n, 0, (OFFCPU_MAX_DEPTH - n) * sizeof(ips[0]));
	return 0;
}

static const struct cached_stack *
stack_get(struct offcpu *o, __s32 id)
{
	static __u64 buf[OFFCPU_MAX_DEPTH];
	if (id < 0 || id >= OFFCPU_STACK_SLOTS + OFFCPU_USTACK_SLOTS)
		return NULL;
	if (!o->stacks[id]) {
		if (stack_read(o, id, buf) < 0)
			return NULL;
		/* Both end at the first zero address, as the stack-trace map's stacks do. */
		uint16_t n = 0;
		while (n < OFFCPU_MAX_DEPTH && buf[n])
			n++;
		struct cached_stack *c = malloc(sizeof(*c) + n * sizeof(buf[0]));
		if (!c)
			errx(1, "out of memory");
		c->n = n;
		c->skip = -1;
		c->named = 0;
		memcpy(c->ips, buf, n * sizeof(buf[0]));
		o->stacks[id] = c;
	}
	return o->stacks[id];
}

/* Writes one group of pieces, with the stack copy of a group of one (deep, or NULL): the
 * stacks are looked up, and their symbols sent, once. */
static void
write_group(struct offcpu *o, const struct batch_key *key, const uint8_t *spans,
	    const uint8_t *top, uint32_t n, const struct offcpu_deep *deep)
{
	struct fr_offcpu *f = &o->fr;
	const struct cached_stack *k = stack_get(o, key->kstack), *u = stack_get(o, key->ustack);
	struct offcpu_span first = stream_span_unpack(spans, 0);
	f->start = first.start;
	f->end = first.end;
	f->pid = key->pid;
	f->tid = key->tid;
	f->cpu = key->cpu;
	f->phase = key->phase;
	f->flags = first.flags | (k ? 0 : OFFCPU_NO_KSTACK) | (u ? 0 : OFFCPU_NO_USTACK);
	f->nmore = n - 1;
	f->more = spans + OFFCPU_SPAN_BYTES;
	f->ntop = u ? TOP_SENT : 0;
	f->top = top;
	f->nstack = 0;
	if (deep && f->ntop && n == 1) {
		f->sp = deep->sp;
		f->bp = deep->bp;
		f->nstack = sizeof(deep->stack);
		f->stack = deep->stack;
	}
	struct cached_stack *km = (struct cached_stack *)k;
	if (km && km->skip < 0)
		km->skip = (int16_t)(o->own_frames ? o->own_frames(o->arg, k->ips, k->n) : 0);
	f->nkernel = k ? (uint16_t)(k->n - k->skip) : 0;
	f->nuser = u ? u->n : 0;
	if (k)
		memcpy(f->ips, k->ips + k->skip, f->nkernel * sizeof(k->ips[0]));
	if (u)
		memcpy(f->ips + f->nkernel, u->ips, u->n * sizeof(u->ips[0]));
	/* The symbols of a kernel stack are looked up once, not at every interval. */
	if (o->before)
		o->before(o->arg, f->pid, f->ips, km && !km->named ? f->nkernel : 0);
	if (km)
		km->named = 1;
	emit_offcpu(o->out, f);
}

static void
put_group(void *arg, const struct batch_key *key, const uint8_t *spans, const uint8_t *top,
	  uint32_t n)
{
	write_group(arg, key, spans, top, n, NULL);
}

static void
flush_groups(struct offcpu *o)
{
	batch_flush(&o->batches, put_group, o);
}

/* Notes [from, to) of the interval that started as s on thread tid, for its group; one with
 * a stack copy (deep) is written at once, on its own. */
static void
put_piece(struct offcpu *o, uint32_t tid, const struct offcpu_start *s, uint64_t from,
	  uint64_t to, uint32_t flags, const struct offcpu_deep *deep)
{
	if (o->deadline_ns && to > o->deadline_ns)
		to = o->deadline_ns;
	if (from >= to)
		return;
	struct batch_key k = { .tid = tid, .pid = s->pid, .cpu = s->cpu, .phase = s->phase,
			       .kstack = s->kstack, .ustack = s->ustack };
	struct offcpu_span sp = { .start = from, .end = to,
				  .flags = flags | (from > s->ts ? OFFCPU_CONTINUED : 0) };
	if (deep) {
		uint8_t span[OFFCPU_SPAN_BYTES];
		stream_span_pack(span, 0, &sp);
		write_group(o, &k, span, (const uint8_t *)s->top, 1, deep);
		return;
	}
	if (batch_add(&o->batches, &k, &sp, s->top))
		flush_groups(o);
}

/* The stack copy of an interval still open, when the program made one: read at each drain
 * that reports a piece of it, and kept only if it is still that interval's. */
static const struct offcpu_deep *
open_deep(struct offcpu *o, const struct open_slot *s)
{
	__u32 tid = s->tid;
	if (!s->s.deep || bpf_map_lookup_elem(o->deep_fd, &tid, &o->deep) != 0 ||
	    o->deep.ts != s->s.ts)
		return NULL;
	return &o->deep;
}

/* Reads the "starts" map into the current table, keeping what the previous drain had
 * reported of the same interval.  Keys can move while we walk; a restart only repeats.
 * The program writes a thread's entry in place, ts 0 first and the new ts last: an entry
 * with ts 0 is a thread on the CPU, and a read is kept only when a second read gives it
 * again (one that changed in between is an interval that ended, which the ring has, or
 * one that began at this very moment, reported from the next drain on). */
static void
scan_open(struct offcpu *o)
{
	struct opentab *now = &o->open[o->cur], *before = &o->open[o->cur ^ 1];
	__u32 key, next;
	struct offcpu_start s, again;
	int first = 1;
	for (int guard = 0; guard < 4 * OFFCPU_MAX_THREADS; guard++) {
		if (bpf_map_get_next_key(o->starts_fd, first ? NULL : &key, &next) != 0)
			break;
		first = 0;
		key = next;
		if (bpf_map_lookup_elem(o->starts_fd, &key, &s) != 0 || s.ts == 0 ||
		    bpf_map_lookup_elem(o->starts_fd, &key, &again) != 0 ||
		    memcmp(&s, &again, sizeof(s)) != 0)
			continue;
		struct open_slot *slot = open_find(now, key, 1), *old = open_find(before, key, 0);
		slot->s = s;
		slot->until = old && old->s.ts == s.ts ? old->until : 0;
	}
}

void
offcpu_finished(struct offcpu *o, const struct offcpu_event *e, const struct offcpu_deep *deep)
{
	struct open_slot *slot = open_find(&o->open[o->cur], e->tid, 0);
	if (!slot || slot->s.ts != e->start)
		slot = open_find(&o->open[o->cur ^ 1], e->tid, 0);
	if (slot && slot->s.ts != e->start)
		slot = NULL;
	struct offcpu_start s = { .ts = e->start, .kstack = e->kstack, .ustack = e->ustack,
				  .pid = e->pid, .cpu = e->cpu, .phase = e->phase };
	memcpy(s.top, e->top, sizeof(s.top));
	uint64_t from = slot && slot->until ? slot->until : e->start;
	if (e->end > from)
		put_piece(o, e->tid, &s, from, e->end, 0, deep && deep->ts == e->start ? deep : NULL);
	if (slot)
		slot->s.ts = 0; /* done: a later interval has another start */
}

int
offcpu_ring_event(void *ctx, void *data, size_t len)
{
	struct offcpu *o = ctx;
	if (len < sizeof(struct offcpu_event)) {
		o->malformed++;
		return 0;
	}
	const struct offcpu_deep_event *de = data;
	offcpu_finished(o, data, len >= sizeof(*de) ? &de->d : NULL);
	return 0;
}

static void
put_lost(struct offcpu *o, uint64_t time, uint64_t count, uint32_t kind)
{
	if (!count)
		return;
	struct fr_lost l = { .time = time, .count = count, .kind = kind };
	emit_lost(o->out, &l);
}

/* The program's per-CPU counters, summed; the growth since the last drain goes out. */
static void
put_counters(struct offcpu *o, uint64_t time, uint64_t incomplete)
{
	uint64_t grown[OFFCPU_C_MAX] = { 0 };
	__u64 *v = calloc((size_t)o->ncpu, sizeof(*v));
	if (!v)
		errx(1, "out of memory");
	for (__u32 k = 0; k < OFFCPU_C_MAX; k++) {
		uint64_t sum = 0;
		if (bpf_map_lookup_elem(o->counters_fd, &k, v) == 0)
			for (int c = 0; c < o->ncpu; c++)
				sum += v[c];
		grown[k] = sum > o->counted[k] ? sum - o->counted[k] : 0;
		o->counted[k] = sum > o->counted[k] ? sum : o->counted[k];
	}
	free(v);
	put_lost(o, time, grown[OFFCPU_C_RING_DROPS], LOST_OFFCPU_RING);
	put_lost(o, time, grown[OFFCPU_C_STARTS_FULL] + grown[OFFCPU_C_ASLEEP_FULL] + incomplete,
		 LOST_OFFCPU_INCOMPLETE);
	put_lost(o, time, grown[OFFCPU_C_FILTERED], LOST_OFFCPU_FILTERED);
	put_lost(o, time, grown[OFFCPU_C_UNSAMPLED], LOST_OFFCPU_UNSAMPLED);
	put_lost(o, time,
		 grown[OFFCPU_C_KSTACK_ERR] + grown[OFFCPU_C_USTACK_ERR] +
			 grown[OFFCPU_C_DEEP_FULL],
		 LOST_OFFCPU_STACK);
	put_lost(o, time, o->malformed, LOST_MALFORMED);
	o->malformed = 0;
}

void
offcpu_drain(struct offcpu *o, struct emit *out, uint64_t *round)
{
	uint64_t t = *round;
	o->out = out;
	o->cur ^= 1;
	struct opentab *now = &o->open[o->cur];
	now->gen++;
	scan_open(o);
	/* An interval younger than the minimum duration may still be dropped at its end: the
	 * round waits for it instead of reporting a piece of it. */
	for (size_t i = 0; now->slots && i < now->cap; i++) {
		const struct open_slot *s = &now->slots[i];
		if (s->gen == now->gen && s->s.ts < t && t - s->s.ts < o->min_ns && s->s.ts < *round)
			*round = s->s.ts;
	}
	for (size_t i = 0; now->slots && i < now->cap; i++) {
		struct open_slot *s = &now->slots[i];
		if (s->gen != now->gen || s->s.ts >= *round || t - s->s.ts < o->min_ns)
			continue;
		uint64_t from = s->until ? s->until : s->s.ts;
		if (from < *round) {
			put_piece(o, s->tid, &s->s, from, *round, OFFCPU_CONTINUES, open_deep(o, s));
			s->until = *round;
		}
	}
	if (ring_buffer__consume(o->rb) < 0)
		warnx("off-cpu: cannot read the ring buffer");
	flush_groups(o);
	put_counters(o, *round, 0);
}

void
offcpu_finish(struct offcpu *o, struct emit *out, uint64_t end)
{
	uint64_t incomplete = 0;
	o->out = out;
	o->cur ^= 1;
	struct opentab *now = &o->open[o->cur];
	now->gen++;
	scan_open(o);
	ring_buffer__consume(o->rb);
	for (size_t i = 0; now->slots && i < now->cap; i++) {
		struct open_slot *s = &now->slots[i];
		if (s->gen != now->gen || s->s.ts == 0 || s->s.ts >= end || end - s->s.ts < o->min_ns)
			continue;
		uint64_t from = s->until ? s->until : s->s.ts;
		if (from < end)
			put_piece(o, s->tid, &s->s, from, end, OFFCPU_CONTINUES, open_deep(o, s));
		incomplete++;
	}
	flush_groups(o);
	put_counters(o, end > 0 ? end - 1 : 0, incomplete);
}
