#include "window.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aggout.h"

int
windows_init(struct windows *w, struct stream_writer *out, const struct window_opts *o)
{
	memset(w, 0, sizeof(*w));
	w->out = out;
	w->width = o->width;
	w->reorder_ns = o->reorder_ns;
	w->max_pending = o->max_pending;
	return stacktab_init(&w->tab, o->max_stacks);
}

uint64_t
windows_set_width(struct windows *w, uint64_t width)
{
	w->width = width;
	if (w->reorder_ns > width)
		w->reorder_ns = width;
	return w->reorder_ns;
}

void
windows_origin(struct windows *w, uint64_t t)
{
	if (w->have_origin)
		return;
	w->have_origin = 1;
	w->origin = t;
	w->index = 0;
	w->start = t;
	w->end = t + w->width;
}

#define STAT AGG_STAT

void
windows_debuginfod(struct windows *w, const struct fr_debuginfod *d)
{
	w->have_debuginfod = 1;
	w->debuginfod = *d;
}

/* The debuginfod.* statistics into st (room for at most room): how many. */
static uint16_t
debuginfod_stats(const struct windows *w, struct fr_stat *st, uint16_t room)
{
	const struct fr_debuginfod *d = &w->debuginfod;
	const struct fr_stat all[] = {
		STAT("debuginfod.queried", d->queried),
		STAT("debuginfod.requests", d->requests),
		STAT("debuginfod.fetched", d->fetched),
		STAT("debuginfod.not_found", d->not_found),
		STAT("debuginfod.failed", d->failed),
		STAT("debuginfod.out_of_time", d->out_of_time),
		STAT("debuginfod.oversized", d->oversized),
		STAT("debuginfod.bytes_fetched", d->bytes_fetched),
	};
	return w->have_debuginfod ? agg_copy_stats(all, sizeof(all) / sizeof(all[0]), st, room)
				  : 0;
}

/* The jit diagnostics (docs/jit.md): unwind's totals as of the window's end. */
static uint16_t
jit_stats(const struct fr_jit *j, struct fr_stat *stats, uint16_t room)
{
	const struct fr_stat all[] = {
		STAT("jit.files_found", j->files),
		STAT("jit.symbols_loaded", j->symbols),
		STAT("jit.frames_named", j->named),
		STAT("jit.frames_unnamed", j->unnamed),
		STAT("jit.symbols_dropped", j->dropped),
		STAT("jit.names_truncated", j->truncated),
		STAT("jit.malformed_entries", j->malformed),
		STAT("jit.rereads", j->rereads),
	};
	return agg_copy_stats(all, sizeof(all) / sizeof(all[0]), stats, room);
}

static int
put_stats(struct windows *w, uint32_t reason, uint64_t end)
{
	static struct fr_window_end e; /* large: keep it off the stack */
	const struct wstats *s = &w->st;
	struct fr_stat stats[] = {
		STAT("samples", s->samples),
		STAT("cpu_nanoseconds", s->cpu_ns),
		STAT("lost_samples", s->lost),
		STAT("malformed_samples", s->malformed),
		STAT("aggregation_dropped_samples", s->dropped),
		STAT("aggregation_dropped_nanoseconds", s->dropped_ns),
		STAT("usable_stacks", s->usable),
		STAT("unusable_stacks", s->unusable),
		STAT("truncated_stacks", s->truncated),
		STAT("empty_stacks", s->empty),
		STAT("cyclic_stacks", s->cycle),
		STAT("out_of_mapping_stacks", s->out_of_mapping),
		STAT("failed_unwind_stacks", s->failed),
		STAT("distinct_stacks", w->tab.n),
		STAT("max_stacks", w->tab.max),
		STAT("event_order.max_pending_events", w->max_pending),
		STAT("event_order.reorder_window_nanos", w->reorder_ns),
		STAT("event_order.peak_pending_events", w->peak_pending),
		STAT("event_order.late_events", s->late),
		STAT("event_order.forced_flushes", s->forced),
		STAT("event_order.timeline_events_dropped", 0),
	};
	e.index = w->index;
	e.start = w->start;
	e.end = end;
	e.reason = reason;
	e.nstats = sizeof(stats) / sizeof(stats[0]);
	memcpy(e.stats, stats, sizeof(stats));
	if (w->off)
		e.nstats += offcpu_agg_stats(w->off, e.stats + e.nstats,
					     (uint16_t)(STREAM_MAX_STATS - e.nstats));
	if (w->heap)
		e.nstats += heap_agg_stats(w->heap, e.stats + e.nstats,
					   (uint16_t)(STREAM_MAX_STATS - e.nstats));
	if (w->phys)
		e.nstats += physical_agg_stats(w->phys, e.stats + e.nstats,
					       (uint16_t)(STREAM_MAX_STATS - e.nstats));
	e.nstats += debuginfod_stats(w, e.stats + e.nstats,
				     (uint16_t)(STREAM_MAX_STATS - e.nstats));
	if (w->have_jit)
		e.nstats += jit_stats(&w->jit, e.stats + e.nstats,
				      (uint16_t)(STREAM_MAX_STATS - e.nstats));
	return stream_put_window_end(w->out, &e);
}

static int
put_stacks(struct windows *w)
{
	static struct fr_window_stack ws;
	for (size_t i = 0; i < w->tab.nslots; i++) {
		const struct stack_entry *e = w->tab.slots[i];
		if (!e)
			continue;
		ws.index = w->index;
		ws.pid = e->pid;
		ws.tid = e->tid;
		ws.count = e->count;
		ws.nanos = e->nanos;
		ws.nlocs = e->nlocs;
		memcpy(ws.locs, e->locs, e->nlocs * sizeof(e->locs[0]));
		if (stream_put_window_stack(w->out, &ws) < 0)
			return -1;
	}
	return 0;
}

static int
forward_held(struct windows *w)
{
	if (!w->held.data)
		return 0;
	int rc = stream_forward(w->out, &w->held);
	free((void *)w->held.data);
	w->held.data = NULL;
	w->held_until = 0;
	return rc;
}

int
windows_hold(struct windows *w, const struct frame *f)
{
	void *p = malloc(f->len ? f->len : 1);
	if (!p)
		return -1;
	memcpy(p, f->data, f->len);
	free((void *)w->held.data);
	w->held = *f;
	w->held.data = p;
	return 0;
}

int
windows_hold_until(struct windows *w, const struct frame *f, uint64_t since)
{
	if (windows_hold(w, f) < 0)
		return -1;
	w->held_until = since;
	return 0;
}

void
windows_exec(struct windows *w, uint64_t t)
{
	if (w->have_origin && t > w->start && !w->exec_at)
		w->exec_at = t;
}

static int
close_window(struct windows *w, uint32_t reason, uint64_t end)
{
	struct fr_window_start s = { w->index, w->start, end };
	/* The off-CPU pieces this window counted go out before it closes. */
	if (w->off && offcpu_agg_flush(w->off, w->out) < 0)
		return -1;
	if (stream_put_window_start(w->out, &s) < 0 || put_stacks(w) < 0)
		return -1;
	if (w->off && offcpu_agg_put(w->off, w->out, w->index, w->start, w->tab.max) < 0)
		return -1;
	if (w->heap && heap_agg_put(w->heap, w->out, w->index, w->start) < 0)
		return -1;
	if (w->phys && physical_agg_put(w->phys, w->out, w->index, w->start) < 0)
		return -1;
	if (w->st.dropped && agg_warning(w->out, w->start, "stack cap of %zu distinct stacks "
					  "reached: %llu samples (%llu ns) omitted", w->tab.max,
					  (unsigned long long)w->st.dropped,
					  (unsigned long long)w->st.dropped_ns) < 0)
		return -1;
	if (put_stats(w, reason, end) < 0 || stream_flush(w->out) < 0)
		return -1;
	w->published_any = 1;
	stacktab_clear(&w->tab);
	memset(&w->st, 0, sizeof(w->st));
	if (w->off)
		offcpu_agg_clear(w->off);
	w->index++;
	w->start = end;
	w->end = w->start + w->width;
	if (w->heap) {
		if (heap_agg_next(w->heap) < 0)
			return -1;
		heap_agg_window(w->heap, w->index);
	}
	if (w->phys) {
		if (physical_agg_next(w->phys) < 0)
			return -1;
		physical_agg_window(w->phys, w->index);
	}
	return 0;
}

/* Where the current window ends: its regular end, or an exec inside it. */
static uint64_t
window_end(struct windows *w)
{
	if (w->exec_at && w->exec_at <= w->start)
		w->exec_at = 0; /* at a boundary, or late: nothing to cut */
	if (w->exec_at && w->exec_at < w->end)
		return w->exec_at;
	return w->end;
}

uint64_t
windows_current_end(struct windows *w)
{
	return window_end(w);
}

int
windows_advance(struct windows *w, uint64_t t)
{
	/* Most times fall inside the open window, with no exec to cut it short. */
	if (t < w->end && !w->exec_at)
		return 0;
	/* A corrupt time would otherwise publish empty windows for years of event time. */
	if (w->have_origin && t >= w->end && (t - w->end) / w->width >= WINDOWS_MAX_GAP) {
		w->err = "event time jumps more than 100000 windows ahead";
		return -1;
	}
	while (w->have_origin && t >= window_end(w)) {
		uint64_t end = window_end(w);
		int at_exec = end == w->exec_at;
		if (at_exec)
			w->exec_at = 0;
		int due = at_exec || (w->held_until && end >= w->held_until);
		if (close_window(w, WINDOW_COMPLETE, end) < 0 || (due && forward_held(w) < 0))
			return -1;
	}
	return 0;
}

int
windows_close_before(struct windows *w, uint64_t t)
{
	return t > 0 ? windows_advance(w, t - 1) : 0;
}

int
windows_add(struct windows *w, const struct stack_event *s)
{
	windows_origin(w, s->time);
	if (windows_advance(w, s->time) < 0)
		return -1;
	if (s->time < w->start)
		w->st.late++;
	w->st.samples++;
	if (s->flags & STACK_USABLE)
		w->st.usable++;
	else
		w->st.unusable++;
	w->st.truncated += !!(s->flags & STACK_TRUNCATED);
	w->st.empty += !!(s->flags & STACK_EMPTY);
	w->st.cycle += !!(s->flags & STACK_CYCLE);
	w->st.out_of_mapping += !!(s->flags & STACK_OUT_OF_MAPPING);
	w->st.failed += !!(s->flags & STACK_UNWIND_FAILED);
	int rc = stacktab_add(&w->tab, s->pid, s->tid, s->locs, s->nlocs, 1, s->period);
	if (rc < 0)
		return -1;
	if (rc == 0) {
		w->st.dropped++;
		w->st.dropped_ns += s->period;
	} else {
		w->st.cpu_ns += s->period;
	}
	return 0;
}

int
windows_heap_at(struct windows *w, uint64_t time)
{
	windows_origin(w, time);
	if (windows_advance(w, time) < 0)
		return -1;
	if (time < w->start)
		w->st.late++;
	return 0;
}

int
windows_finish(struct windows *w, uint64_t t)
{
	windows_origin(w, t);
	/* Every window that ends before t is complete.  The one t falls in, or ends, is the
	 * final one, also when the recording ends exactly on its boundary (a --duration that
	 * is a multiple of --window): the last window of every run says it is the last. */
	if (windows_close_before(w, t) < 0)
		return -1;
	/* Only events stamped at or after the end (a corrupt or hand-made stream) can have
	 * opened a window past t; an empty one of them spans no time and is not published. */
	if (t < w->start && w->st.samples == 0 && w->st.lost == 0 && w->published_any)
		return forward_held(w);
	if (close_window(w, WINDOW_FINAL, t > w->start ? t : w->start) < 0)
		return -1;
	return forward_held(w);
}

void
windows_release(struct windows *w)
{
	stacktab_release(&w->tab);
	free((void *)w->held.data);
	w->held.data = NULL;
}
