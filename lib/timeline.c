#include "timeline.h"
#include "grow.h"

#include <stdlib.h>
#include <string.h>

void
timeline_init(struct timeline *t, uint64_t max)
{
	memset(t, 0, sizeof(*t));
	t->max = max;
}

void
timeline_release(struct timeline *t)
{
	free(t->s);
	free(t->locs);
	timeline_init(t, t->max);
}

void
timeline_clear(struct timeline *t)
{
	t->n = 0;
	t->nlocs = 0;
	t->dropped = 0;
}

int
timeline_add_entry(struct timeline *t, const struct tl_sample *v, const uint32_t *locs,
		   uint16_t nlocs)
{
	uint16_t n = nlocs > STREAM_MAX_LOCS ? STREAM_MAX_LOCS : nlocs;

	if (t->n >= t->max) {
		t->dropped++;
		return 0;
	}
	if (grow_array((void **)&t->s, &t->cap, t->n, 1, sizeof(*t->s)) < 0 ||
	    grow_array((void **)&t->locs, &t->cap_locs, t->nlocs, n, sizeof(*t->locs)) < 0)
		return -1;
	t->s[t->n] = *v;
	t->s[t->n].locs = t->nlocs;
	t->s[t->n++].nlocs = n;
	memcpy(t->locs + t->nlocs, locs, n * sizeof(*locs));
	t->nlocs += n;
	return 0;
}

int
timeline_add(struct timeline *t, const struct fr_stack *s)
{
	struct tl_sample v = { .time = s->time, .period = s->period, .pid = s->pid,
			       .tid = s->tid, .cpu = s->cpu, .flags = s->flags };
	return timeline_add_entry(t, &v, s->locs, s->nlocs);
}

int
timeline_add_offcpu(struct timeline *t, const struct fr_offcpu_stack *s)
{
	for (uint32_t i = 0; i <= s->nmore; i++) {
		struct offcpu_span sp = stream_offcpu_stack_span(s, i);
		struct tl_sample v = { .time = sp.start, .period = sp.end - sp.start,
				       .pid = s->pid, .tid = s->tid, .cpu = s->cpu,
				       .flags = (s->stack_flags & ~TL_OFFCPU) | TL_OFFCPU };
		if (timeline_add_entry(t, &v, s->locs, s->nlocs) < 0)
			return -1;
	}
	return 0;
}
