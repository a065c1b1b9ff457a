#include "physical.h"

#include <stdio.h>
#include <string.h>

#include "aggout.h"
#include "defs.h"

int
physical_agg_init(struct physical_agg *p, size_t max_stacks)
{
	memset(p, 0, sizeof(*p));
	p->percent = 100;
	return heap_agg_init(&p->core, max_stacks);
}

void
physical_agg_target(struct physical_agg *p, const struct fr_target *t)
{
	p->alloc = defs_profile_named(t->profiles, "physical-alloc");
	p->usage = defs_profile_named(t->profiles, "physical-usage");
	/* A target that names neither (a producer that predates the names): both. */
	if (!p->alloc && !p->usage)
		p->alloc = p->usage = 1;
	/* 0 is a frame without the field: every allocation was sampled. */
	p->percent = t->physical_percent && t->physical_percent <= 100 ? t->physical_percent : 100;
}

void
physical_agg_window(struct physical_agg *p, uint32_t index)
{
	heap_agg_window(&p->core, index);
}

uint64_t
physical_scale(uint64_t raw, uint32_t percent)
{
	if (percent == 0 || percent >= 100)
		return raw;
	uint64_t whole = raw / percent, rest = raw % percent;
	if (whole > (UINT64_MAX - 100) / 100)
		return UINT64_MAX;
	return whole * 100 + (rest * 100 + percent / 2) / percent;
}

static int
on_page(struct physical_agg *p, const struct fr_page_stack *s)
{
	struct heap_entry *e = heap_agg_entry(&p->core, s->pid, s->tid, s->locs, s->nlocs);
	if (!e)
		return -1;
	p->st.samples++;
	p->st.usable += !!(s->stack_flags & STACK_USABLE);
	p->st.unusable += !(s->stack_flags & STACK_USABLE);
	return heap_agg_add(&p->core, e, s->pid, s->pfn, PHYSICAL_PAGE_BYTES, 1ull << s->order,
			    !(s->flags & PAGE_UNTRACKED));
}

int
physical_agg_frame(struct physical_agg *p, const struct frame *f, char *err, size_t errlen)
{
	static union {
		struct fr_page_stack s;
		struct fr_page_free f;
	} u;
	if (f->type == FR_PAGE_STACK) {
		if (stream_get_page_stack(f, &u.s, err, errlen) < 0)
			return -1;
		if (on_page(p, &u.s) < 0) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
	} else if (f->type == FR_PAGE_FREE) {
		if (stream_get_page_free(f, &u.f, err, errlen) < 0)
			return -1;
		if (heap_agg_drop(&p->core, u.f.pid, u.f.pfn))
			p->st.frees++;
		else
			p->st.unmatched++;
	}
	return 0;
}

int
physical_agg_lost(struct physical_agg *p, const struct fr_lost *l)
{
	static const char *const why[] = {
		"page events lost (the BPF ring buffer was full)",
		"sampled page allocations not tracked (the tracked-page table was full)",
	};
	uint64_t *c = l->kind == LOST_PAGE_RING ? &p->st.ring_drops :
		      l->kind == LOST_PAGE_UNTRACKED ? &p->st.untracked :
		      l->kind == LOST_PAGE_STACK ? &p->st.stack_errors : NULL;
	if (!c)
		return 0;
	*c += l->count;
	if (!p->usage || l->kind == LOST_PAGE_STACK || !l->count)
		return 1;
	snprintf(p->err, sizeof(p->err), "physical-usage: %llu %s: the usage would be wrong; "
		 "lower --physical-memory-probability", (unsigned long long)l->count,
		 why[l->kind - LOST_PAGE_RING]);
	return -1;
}

struct physical_put {
	struct physical_agg *p;
	struct stream_writer *out;
	uint32_t index;
};

/* One stack of the window: written with its allocations scaled, or counted as left out by
 * the stack cap. */
static int
put_page_stack(void *arg, const struct heap_entry *e, int admitted)
{
	static struct fr_window_page_stack ws;
	struct physical_put *pp = arg;
	struct physical_stats *st = &pp->p->st;
	uint64_t pages = physical_scale(e->alloc_objects, pp->p->percent);
	uint64_t bytes = physical_scale(e->alloc_space, pp->p->percent);
	if (!admitted) {
		st->dropped_alloc_pages += pages;
		st->dropped_alloc_bytes += bytes;
		st->dropped_usage_pages += e->inuse_objects;
		st->dropped_usage_bytes += e->inuse_space;
		return 0;
	}
	ws = (struct fr_window_page_stack){ .index = pp->index, .pid = e->pid, .tid = e->tid,
		.alloc_pages = pages, .alloc_bytes = bytes, .usage_pages = e->inuse_objects,
		.usage_bytes = e->inuse_space, .nlocs = e->nlocs };
	memcpy(ws.locs, e->locs, e->nlocs * sizeof(e->locs[0]));
	st->alloc_pages += pages;
	st->alloc_bytes += bytes;
	st->usage_pages += e->inuse_objects;
	st->usage_bytes += e->inuse_space;
	st->distinct++;
	return stream_put_window_page_stack(pp->out, &ws);
}

int
physical_agg_put(struct physical_agg *p, struct stream_writer *out, uint32_t index,
		 uint64_t start)
{
	struct physical_put pp = { p, out, index };
	physical_agg_window(p, index);
	if (heap_agg_each(&p->core, put_page_stack, &pp) < 0)
		return -1;
	const struct physical_stats *st = &p->st;
	if (!st->dropped_alloc_pages && !st->dropped_usage_pages)
		return 0;
	return agg_warning(out, start, "physical stack cap of %zu distinct stacks reached: "
			   "%llu allocated pages (%llu bytes) and %llu tracked pages (%llu bytes) "
			   "omitted", p->core.max_stacks,
			   (unsigned long long)st->dropped_alloc_pages,
			   (unsigned long long)st->dropped_alloc_bytes,
			   (unsigned long long)st->dropped_usage_pages,
			   (unsigned long long)st->dropped_usage_bytes);
}

#define STAT AGG_STAT

uint16_t
physical_agg_stats(const struct physical_agg *p, struct fr_stat *stats, uint16_t room)
{
	const struct physical_stats *s = &p->st;
	const struct fr_stat all[] = {
		STAT("physical.alloc_pages", s->alloc_pages),
		STAT("physical.alloc_bytes", s->alloc_bytes),
		STAT("physical.usage_pages", s->usage_pages),
		STAT("physical.usage_bytes", s->usage_bytes),
		STAT("physical.aggregation_dropped_alloc_pages", s->dropped_alloc_pages),
		STAT("physical.aggregation_dropped_alloc_bytes", s->dropped_alloc_bytes),
		STAT("physical.aggregation_dropped_usage_pages", s->dropped_usage_pages),
		STAT("physical.aggregation_dropped_usage_bytes", s->dropped_usage_bytes),
		STAT("physical.samples", s->samples),
		STAT("physical.frees", s->frees),
		STAT("physical.unmatched_frees", s->unmatched),
		STAT("physical.tracked_pages", s->usage_pages + s->dropped_usage_pages),
		STAT("physical.tracked_allocations", p->core.nblocks),
		STAT("physical.ring_buffer_drops", s->ring_drops),
		STAT("physical.untracked_allocations", s->untracked),
		STAT("physical.stack_failures", s->stack_errors),
		STAT("physical.tracked_evictions", p->core.st.evictions),
		STAT("physical.usable_stacks", s->usable),
		STAT("physical.unusable_stacks", s->unusable),
		STAT("physical.distinct_stacks", s->distinct),
		STAT("physical.max_stacks", p->core.max_stacks),
		STAT("physical.probability_percent", p->percent),
	};
	return agg_copy_stats(all, sizeof(all) / sizeof(all[0]), stats, room);
}

int
physical_agg_next(struct physical_agg *p)
{
	memset(&p->st, 0, sizeof(p->st));
	return heap_agg_next(&p->core);
}

void
physical_agg_release(struct physical_agg *p)
{
	heap_agg_release(&p->core);
}
