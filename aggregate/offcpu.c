#include "offcpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "window.h"

int
offcpu_agg_init(struct offcpu_agg *o, size_t max_stacks, size_t max_pending)
{
	memset(o, 0, sizeof(*o));
	o->max = max_pending;
	return stacktab_init(&o->tab, max_stacks);
}

static void
sift_up(struct offcpu_agg *o, size_t i)
{
	while (i > 0) {
		size_t parent = (i - 1) / 2;
		if (o->heap[parent]->start <= o->heap[i]->start)
			break;
		struct offcpu_piece *t = o->heap[parent];
		o->heap[parent] = o->heap[i];
		o->heap[i] = t;
		i = parent;
	}
}

static void
sift_down(struct offcpu_agg *o, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < o->n && o->heap[l]->start < o->heap[m]->start)
			m = l;
		if (r < o->n && o->heap[r]->start < o->heap[m]->start)
			m = r;
		if (m == i)
			return;
		struct offcpu_piece *t = o->heap[m];
		o->heap[m] = o->heap[i];
		o->heap[i] = t;
		i = m;
	}
}

static int
heap_push(struct offcpu_agg *o, struct offcpu_piece *p)
{
	if (o->n == o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 256;
		struct offcpu_piece **h = realloc(o->heap, cap * sizeof(*h));
		if (!h)
			return -1;
		o->heap = h;
		o->cap = cap;
	}
	o->heap[o->n++] = p;
	sift_up(o, o->n - 1);
	if (o->n > o->peak)
		o->peak = o->n;
	return 0;
}

static struct offcpu_piece *
heap_pop(struct offcpu_agg *o)
{
	struct offcpu_piece *p = o->heap[0];
	o->heap[0] = o->heap[--o->n];
	sift_down(o, 0);
	return p;
}

uint64_t
offcpu_agg_oldest(const struct offcpu_agg *o)
{
	return o->n ? o->heap[0]->start : UINT64_MAX;
}

int
offcpu_agg_push(struct offcpu_agg *o, const struct fr_offcpu_stack *s)
{
	struct offcpu_piece *p = malloc(sizeof(*p) + s->nlocs * sizeof(s->locs[0]));
	if (!p)
		return -1;
	p->start = s->start;
	p->end = s->end;
	p->pid = s->pid;
	p->tid = s->tid;
	p->cpu = s->cpu;
	p->phase = s->phase;
	p->flags = s->flags;
	p->stack_flags = s->stack_flags;
	p->count = !(s->flags & OFFCPU_CONTINUED);
	p->nlocs = s->nlocs;
	memcpy(p->locs, s->locs, s->nlocs * sizeof(s->locs[0]));
	o->st.pieces++;
	if (s->stack_flags & STACK_USABLE)
		o->st.usable += p->count;
	else
		o->st.unusable += p->count;
	if (heap_push(o, p) < 0) {
		free(p);
		return -1;
	}
	return 0;
}

/* Forwards [from, to) of p as the piece the current window holds. */
static int
forward(struct stream_writer *out, const struct offcpu_piece *p, uint64_t from, uint64_t to)
{
	static struct fr_offcpu_stack os;
	os.start = from;
	os.end = to > from ? to : from;
	os.pid = p->pid;
	os.tid = p->tid;
	os.cpu = p->cpu;
	os.phase = p->phase;
	os.flags = (p->flags & ~(OFFCPU_CONTINUES | OFFCPU_CONTINUED)) |
		   (p->count ? 0 : OFFCPU_CONTINUED) | (to < p->end ? OFFCPU_CONTINUES : 0) |
		   (p->flags & OFFCPU_CONTINUES);
	os.stack_flags = p->stack_flags;
	os.nlocs = p->nlocs;
	memcpy(os.locs, p->locs, p->nlocs * sizeof(p->locs[0]));
	return stream_put_offcpu_stack(out, &os);
}

/* Counts [from, to) of p, and p's interval when it starts here, into the current window. */
static int
add(struct offcpu_agg *o, const struct offcpu_piece *p, uint64_t from, uint64_t to)
{
	uint64_t ns = to > from ? to - from : 0;
	int rc = stacktab_add(&o->tab, p->pid, p->tid, p->locs, p->nlocs, p->count, ns);
	if (rc < 0)
		return -1;
	if (rc == 0) {
		o->st.dropped += p->count;
		o->st.dropped_ns += ns;
	} else {
		o->st.intervals += p->count;
		o->st.nanos += ns;
	}
	return 0;
}

int
offcpu_agg_release(struct offcpu_agg *o, struct windows *w, uint64_t t, uint64_t limit)
{
	while (o->n && o->heap[0]->start <= t) {
		struct offcpu_piece *p = heap_pop(o);
		if (p->end > limit)
			p->end = limit;
		if (p->start >= limit || (p->start >= p->end && !p->count)) {
			free(p);
			continue;
		}
		windows_origin(w, p->start);
		if (windows_advance(w, p->start) < 0) {
			free(p);
			return -1;
		}
		/* A piece older than the open window (its window was closed by the reorder
		 * window or a forced release) is counted here, as late. */
		if (p->start < w->start) {
			o->st.late++;
			o->st.late_ns += (p->end < w->start ? p->end : w->start) - p->start;
		}
		uint64_t wend = windows_current_end(w);
		uint64_t to = p->end < wend ? p->end : wend;
		if (add(o, p, p->start, to) < 0 || forward(w->out, p, p->start, to) < 0) {
			free(p);
			return -1;
		}
		if (p->end > wend) {
			p->start = wend;
			p->count = 0;
			if (heap_push(o, p) < 0) {
				free(p);
				return -1;
			}
		} else {
			free(p);
		}
	}
	return 0;
}

int
offcpu_agg_lost(struct offcpu_agg *o, const struct fr_lost *l)
{
	switch (l->kind) {
	case LOST_OFFCPU_RING: o->st.ring_drops += l->count; return 1;
	case LOST_OFFCPU_INCOMPLETE: o->st.incomplete += l->count; return 1;
	case LOST_OFFCPU_FILTERED: o->st.filtered += l->count; return 1;
	case LOST_OFFCPU_STACK: o->st.stack_errors += l->count; return 1;
	}
	return 0;
}

int
offcpu_agg_put(struct offcpu_agg *o, struct stream_writer *out, uint32_t index,
	       uint64_t start, size_t max_stacks)
{
	static struct fr_window_stack ws;
	for (size_t i = 0; i < o->tab.nslots; i++) {
		const struct stack_entry *e = o->tab.slots[i];
		if (!e)
			continue;
		ws.index = index;
		ws.pid = e->pid;
		ws.tid = e->tid;
		ws.count = e->count;
		ws.nanos = e->nanos;
		ws.nlocs = e->nlocs;
		memcpy(ws.locs, e->locs, e->nlocs * sizeof(e->locs[0]));
		if (stream_put_window_offcpu_stack(out, &ws) < 0)
			return -1;
	}
	if (o->st.dropped_ns || o->st.dropped) {
		char text[200];
		int n = snprintf(text, sizeof(text), "off-CPU stack cap of %zu distinct stacks "
				 "reached: %llu intervals (%llu ns) omitted", max_stacks,
				 (unsigned long long)o->st.dropped,
				 (unsigned long long)o->st.dropped_ns);
		struct fr_warning wr = { start, { text, (uint16_t)n } };
		if (stream_put_warning(out, &wr) < 0)
			return -1;
	}
	return 0;
}

#define STAT(k, v) { .key = { "off_cpu." k, sizeof("off_cpu." k) - 1 }, .value = (v) }

uint16_t
offcpu_agg_stats(const struct offcpu_agg *o, struct fr_stat *stats, uint16_t room)
{
	const struct offcpu_stats *s = &o->st;
	const struct fr_stat all[] = {
		STAT("intervals", s->intervals),
		STAT("nanoseconds", s->nanos),
		STAT("pieces", s->pieces),
		STAT("ring_buffer_drops", s->ring_drops),
		STAT("incomplete_intervals", s->incomplete),
		STAT("min_duration_filtered", s->filtered),
		STAT("stack_errors", s->stack_errors),
		STAT("usable_stacks", s->usable),
		STAT("unusable_stacks", s->unusable),
		STAT("aggregation_dropped_intervals", s->dropped),
		STAT("aggregation_dropped_nanoseconds", s->dropped_ns),
		STAT("distinct_stacks", o->tab.n),
		STAT("max_stacks", o->tab.max),
		STAT("late_pieces", s->late),
		STAT("late_nanoseconds", s->late_ns),
		STAT("forced_releases", s->forced),
		STAT("max_pending_intervals", o->max),
		STAT("peak_pending_intervals", o->peak),
	};
	uint16_t n = sizeof(all) / sizeof(all[0]);
	if (n > room)
		n = room;
	memcpy(stats, all, n * sizeof(all[0]));
	return n;
}

void
offcpu_agg_clear(struct offcpu_agg *o)
{
	stacktab_clear(&o->tab);
	memset(&o->st, 0, sizeof(o->st));
}

void
offcpu_agg_release_all(struct offcpu_agg *o)
{
	while (o->n)
		free(heap_pop(o));
	free(o->heap);
	o->heap = NULL;
	stacktab_release(&o->tab);
}
