#include "offcpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggout.h"
#include "grow.h"
#include "window.h"

int
offcpu_agg_init(struct offcpu_agg *o, size_t max_stacks, size_t max_pending)
{
	memset(o, 0, sizeof(*o));
	o->max = max_pending;
	o->percent = 100;
	o->keep_pieces = 1;
	return stacktab_init(&o->tab, max_stacks);
}

#define FWD_MAX_PIECES 65536 /* counted pieces held before they are forwarded anyway */

static void
group_unref(struct offcpu_group *g)
{
	if (--g->refs == 0)
		free(g);
}

/* The heap holds pieces by value, ordered by start. */
static void
sift_up(struct offcpu_agg *o, size_t i)
{
	while (i > 0) {
		size_t parent = (i - 1) / 2;
		if (o->heap[parent].start <= o->heap[i].start)
			break;
		struct offcpu_piece t = o->heap[parent];
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
		if (l < o->n && o->heap[l].start < o->heap[m].start)
			m = l;
		if (r < o->n && o->heap[r].start < o->heap[m].start)
			m = r;
		if (m == i)
			return;
		struct offcpu_piece t = o->heap[m];
		o->heap[m] = o->heap[i];
		o->heap[i] = t;
		i = m;
	}
}

static int
heap_push(struct offcpu_agg *o, const struct offcpu_piece *p)
{
	if (grow_array((void **)&o->heap, &o->cap, o->n, 1, sizeof(*o->heap)) < 0)
		return -1;
	o->heap[o->n++] = *p;
	sift_up(o, o->n - 1);
	if (o->n > o->peak)
		o->peak = o->n;
	return 0;
}

static struct offcpu_piece
heap_pop(struct offcpu_agg *o)
{
	struct offcpu_piece p = o->heap[0];
	o->heap[0] = o->heap[--o->n];
	sift_down(o, 0);
	return p;
}

uint64_t
offcpu_agg_oldest(const struct offcpu_agg *o)
{
	return o->n ? o->heap[0].start : UINT64_MAX;
}

int
offcpu_agg_push(struct offcpu_agg *o, const struct fr_offcpu_stack *s,
		int (*make_room)(void *arg), void *arg)
{
	struct offcpu_group *g = malloc(sizeof(*g) + s->nlocs * sizeof(s->locs[0]));
	if (!g)
		return -1;
	*g = (struct offcpu_group){ .refs = 1, .pid = s->pid, .tid = s->tid, .cpu = s->cpu,
				    .phase = s->phase, .flags = s->flags & ~OFFCPU_SPAN_FLAGS,
				    .stack_flags = s->stack_flags, .nlocs = s->nlocs };
	memcpy(g->locs, s->locs, s->nlocs * sizeof(s->locs[0]));
	int rc = 0;
	for (uint32_t i = 0; i <= s->nmore && rc == 0; i++) {
		struct offcpu_span sp = stream_offcpu_stack_span(s, i);
		struct offcpu_piece p = { .start = sp.start, .end = sp.end,
					  .flags = sp.flags & OFFCPU_SPAN_FLAGS,
					  .count = !(sp.flags & OFFCPU_CONTINUED), .g = g };
		o->st.pieces++;
		if (s->stack_flags & STACK_USABLE)
			o->st.usable += p.count;
		else
			o->st.unusable += p.count;
		/* make_room may not come back (an error exit, which the fuzz target catches):
		 * the group is then the queue's to release, in offcpu_agg_release_all. */
		o->inflight = g;
		while (rc == 0 && make_room && o->max && o->n >= o->max)
			rc = make_room(arg);
		if (rc == 0) {
			g->refs++;
			rc = heap_push(o, &p);
			if (rc < 0)
				g->refs--;
		}
	}
	o->inflight = NULL;
	group_unref(g); /* the frame's own reference: the queued pieces hold theirs */
	return rc;
}

struct fwd_ctx {
	struct offcpu_agg *o;
	struct stream_writer *out;
};

/* One frame for the waiting pieces of one group. */
static int
fwd_put(void *arg, uint32_t group, const uint8_t *spans, const uint8_t *extra, uint32_t n)
{
	(void)extra;
	static struct fr_offcpu_stack os; /* large: keep it off the stack */
	struct fwd_ctx *c = arg;
	const struct offcpu_group *g = c->o->fwd.groups[group];
	struct offcpu_span first = stream_span_unpack(spans, 0);
	os.start = first.start;
	os.end = first.end;
	os.pid = g->pid;
	os.tid = g->tid;
	os.cpu = g->cpu;
	os.phase = g->phase;
	os.flags = g->flags | first.flags;
	os.stack_flags = g->stack_flags;
	os.nlocs = g->nlocs;
	memcpy(os.locs, g->locs, g->nlocs * sizeof(g->locs[0]));
	os.nmore = n - 1;
	os.more = spans + OFFCPU_SPAN_BYTES;
	return stream_put_offcpu_stack(c->out, &os) < 0 ? -1 : 0;
}

int
offcpu_agg_flush(struct offcpu_agg *o, struct stream_writer *out)
{
	struct offcpu_fwd *f = &o->fwd;
	struct fwd_ctx c = { o, out };
	int rc = spanbatch_flush(&f->pieces, f->n, fwd_put, &c);
	f->pieces.n = 0;
	for (size_t i = 0; i < f->n; i++) {
		f->groups[i]->fwd = 0;
		group_unref(f->groups[i]);
	}
	f->n = 0;
	return rc ? -1 : 0;
}

/* Forwards [from, to) of p as the piece the current window holds, with its group. */
static int
forward(struct offcpu_agg *o, struct stream_writer *out, const struct offcpu_piece *p,
	uint64_t from, uint64_t to)
{
	struct offcpu_fwd *f = &o->fwd;
	struct offcpu_group *g = p->g;
	if (!o->keep_pieces)
		return 0;
	if (!g->fwd) {
		if (grow_array((void **)&f->groups, &f->cap, f->n, 1, sizeof(*f->groups)) < 0)
			return -1;
		f->groups[f->n++] = g;
		g->refs++;
		g->fwd = (uint32_t)f->n;
	}
	struct offcpu_span s = {
		.start = from,
		.end = to > from ? to : from,
		.flags = (p->count ? 0 : OFFCPU_CONTINUED) |
			 (to < p->end || (p->flags & OFFCPU_CONTINUES) ? OFFCPU_CONTINUES : 0),
	};
	if (spanbatch_add(&f->pieces, g->fwd - 1, &s, NULL) < 0)
		return -1;
	return f->pieces.n >= FWD_MAX_PIECES ? offcpu_agg_flush(o, out) : 0;
}

/* Counts [from, to) of p, and p's interval when it starts here, into the current window. */
static int
add(struct offcpu_agg *o, const struct offcpu_piece *p, uint64_t from, uint64_t to)
{
	uint64_t ns = to > from ? to - from : 0;
	const struct offcpu_group *g = p->g;
	int rc = stacktab_add(&o->tab, g->pid, g->tid, g->locs, g->nlocs, p->count, ns);
	if (rc < 0)
		return -1;
	if (rc == 0) {
		o->st.dropped += p->count;
		o->st.dropped_ns += ns;
	} else {
		o->st.intervals += p->count;
	}
	return 0;
}

int
offcpu_agg_release(struct offcpu_agg *o, struct windows *w, uint64_t t, uint64_t limit)
{
	while (o->n && o->heap[0].start <= t) {
		struct offcpu_piece p = heap_pop(o);
		if (p.end > limit)
			p.end = limit;
		if (p.start >= limit || (p.start >= p.end && !p.count)) {
			group_unref(p.g);
			continue;
		}
		windows_origin(w, p.start);
		if (windows_advance(w, p.start) < 0) {
			group_unref(p.g);
			return -1;
		}
		/* A piece older than the open window (its window was closed by the reorder
		 * window or a forced release) is counted here, as late. */
		if (p.start < w->start) {
			o->st.late++;
			o->st.late_ns += (p.end < w->start ? p.end : w->start) - p.start;
		}
		uint64_t wend = windows_current_end(w);
		/* The piece goes on through the windows one at a time, each one step: the bound
		 * windows_advance puts on a jump of the event time applies to its length. */
		if (p.end > wend && (p.end - wend) / w->width >= WINDOWS_MAX_GAP) {
			w->err = "an off-CPU interval runs more than 100000 windows on";
			group_unref(p.g);
			return -1;
		}
		uint64_t to = p.end < wend ? p.end : wend;
		if (add(o, &p, p.start, to) < 0 || forward(o, w->out, &p, p.start, to) < 0) {
			group_unref(p.g);
			return -1;
		}
		if (p.end > wend) {
			p.start = wend;
			p.count = 0;
			if (heap_push(o, &p) < 0) {
				group_unref(p.g);
				return -1;
			}
		} else {
			group_unref(p.g);
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
	case LOST_OFFCPU_UNSAMPLED: o->st.unsampled += l->count; return 1;
	}
	return 0;
}

/* A recorded value as an estimate of the whole: recorded * 100 / percent, rounded. */
static uint64_t
weigh(const struct offcpu_agg *o, uint64_t v)
{
	if (o->percent >= 100 || o->percent == 0)
		return v;
	return (uint64_t)(((unsigned __int128)v * 100 + o->percent / 2) / o->percent);
}

int
offcpu_agg_put(struct offcpu_agg *o, struct stream_writer *out, uint32_t index,
	       uint64_t start, size_t max_stacks)
{
	static struct fr_window_stack ws;
	o->st.written_intervals = o->st.written_nanos = 0;
	for (size_t i = 0; i < o->tab.nslots; i++) {
		const struct stack_entry *e = o->tab.slots[i];
		if (!e)
			continue;
		ws.index = index;
		ws.pid = e->pid;
		ws.tid = e->tid;
		ws.count = weigh(o, e->count);
		ws.nanos = weigh(o, e->nanos);
		o->st.written_intervals += ws.count;
		o->st.written_nanos += ws.nanos;
		ws.nlocs = e->nlocs;
		memcpy(ws.locs, e->locs, e->nlocs * sizeof(e->locs[0]));
		if (stream_put_window_offcpu_stack(out, &ws) < 0)
			return -1;
	}
	if (o->st.dropped_ns || o->st.dropped)
		return agg_warning(out, start, "off-CPU stack cap of %zu distinct stacks reached: "
				   "%llu intervals (%llu ns) omitted", max_stacks,
				   (unsigned long long)weigh(o, o->st.dropped),
				   (unsigned long long)weigh(o, o->st.dropped_ns));
	return 0;
}

#define STAT(k, v) { .key = { "off_cpu." k, sizeof("off_cpu." k) - 1 }, .value = (v) }

uint16_t
offcpu_agg_stats(const struct offcpu_agg *o, struct fr_stat *stats, uint16_t room)
{
	const struct offcpu_stats *s = &o->st;
	const struct fr_stat all[] = {
		STAT("intervals", s->written_intervals),
		STAT("nanoseconds", s->written_nanos),
		STAT("pieces", s->pieces),
		STAT("ring_buffer_drops", s->ring_drops),
		STAT("incomplete_intervals", s->incomplete),
		STAT("min_duration_filtered", s->filtered),
		STAT("stack_errors", s->stack_errors),
		STAT("usable_stacks", s->usable),
		STAT("unusable_stacks", s->unusable),
		STAT("aggregation_dropped_intervals", weigh(o, s->dropped)),
		STAT("aggregation_dropped_nanoseconds", weigh(o, s->dropped_ns)),
		STAT("distinct_stacks", o->tab.n),
		STAT("max_stacks", o->tab.max),
		STAT("late_pieces", s->late),
		STAT("late_nanoseconds", s->late_ns),
		STAT("forced_releases", s->forced),
		STAT("max_pending_intervals", o->max),
		STAT("peak_pending_intervals", o->peak),
		STAT("probability_percent", o->percent),
		STAT("recorded_intervals", s->intervals),
		STAT("unsampled_switch_outs", s->unsampled),
	};
	return agg_copy_stats(all, sizeof(all) / sizeof(all[0]), stats, room);
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
		group_unref(heap_pop(o).g);
	if (o->inflight)
		group_unref(o->inflight);
	o->inflight = NULL;
	for (size_t i = 0; i < o->fwd.n; i++)
		group_unref(o->fwd.groups[i]);
	free(o->fwd.groups);
	spanbatch_release(&o->fwd.pieces);
	free(o->heap);
	memset(&o->fwd, 0, sizeof(o->fwd));
	o->heap = NULL;
	o->n = o->cap = 0;
	stacktab_release(&o->tab);
}
