/* FR_FORGET after the windows that may still name what it forgets (see forget.h). */
#include "forget.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"

/* Indexes item i when it is a name, so a reuse finds it without a scan. */
static int
index_name(struct forget_q *q, size_t i)
{
	const struct forget_item *e = &q->v[i];
	if (e->nids || !e->time)
		return 0;
	return idmap_put(e->tid ? &q->by_tid : &q->by_pid, e->tid ? e->tid : e->pid,
			 (uint32_t)i + 1);
}

static int
push(struct forget_q *q, struct forget_item it)
{
	if (grow_array((void **)&q->v, &q->cap, q->n, 1, sizeof(*q->v)) < 0)
		return -1;
	q->v[q->n++] = it;
	return index_name(q, q->n - 1);
}

int
forget_exit(struct forget_q *q, const struct fr_task *t)
{
	if (!t->pid)
		return 0;
	/* The main thread's name is the process's: it goes with the process (the other
	 * threads may outlive the main one). */
	if (t->tid != t->pid &&
	    push(q, (struct forget_item){ .time = t->time, .pid = t->pid, .tid = t->tid }) < 0)
		return -1;
	if ((t->flags & EXIT_PROCESS) &&
	    push(q, (struct forget_item){ .time = t->time, .pid = t->pid }) < 0)
		return -1;
	return 0;
}

int
forget_frame(struct forget_q *q, const struct fr_forget *f)
{
	struct forget_item it = { .pid = f->pid, .tid = f->tid, .nids = f->n };
	if (f->n && !(it.ids = malloc(f->n * sizeof(*it.ids))))
		return -1;
	for (uint32_t i = 0; i < f->n; i++)
		it.ids[i] = stream_forget_id(f, i);
	if (push(q, it) < 0) {
		free(it.ids);
		return -1;
	}
	return 0;
}

static void
reuse(struct forget_q *q, struct idmap *ix, uint32_t id, uint64_t time)
{
	uint32_t i;
	if (idmap_get(ix, id, &i) && i && i <= q->n && q->v[i - 1].time < time)
		q->v[i - 1].reused = 1;
}

void
forget_reused(struct forget_q *q, uint32_t pid, uint32_t tid, uint64_t time)
{
	if (!q->n)
		return;
	reuse(q, &q->by_tid, tid, time);
	reuse(q, &q->by_pid, pid, time);
}

int
forget_due(const struct forget_q *q, uint32_t open_index)
{
	for (size_t i = 0; i < q->n; i++)
		if (q->v[i].nids && q->v[i].armed && q->v[i].window < open_index)
			return 1;
	return 0;
}

/* Moves the ids of e that hold names to the end of e->ids; returns how many are not named
 * (those first, in their order). */
static uint32_t
split_named(struct forget_item *e, const struct forget_hold *hold)
{
	uint32_t n = 0, x;

	if (!hold || !hold->named)
		return e->nids;
	for (uint32_t i = 0; i < e->nids; i++) {
		if (idmap_get(hold->named, e->ids[i], &x))
			continue;
		uint32_t id = e->ids[i];
		memmove(e->ids + n + 1, e->ids + n, (i - n) * sizeof(*e->ids));
		e->ids[n++] = id;
	}
	return n;
}

/* Item e is due: it goes out but for the ids hold names.  1 when all of it went, 0 when
 * named ids wait on in it, -1 on a write error or when out of memory. */
static int
put_due(struct forget_item *e, const struct forget_hold *hold, struct stream_writer *out)
{
	uint32_t n = split_named(e, hold);

	if (n || !e->nids) {
		struct fr_forget f = { .pid = e->pid, .tid = e->tid, .n = n };
		if (stream_put_forget(out, &f, e->ids) < 0)
			return -1;
		for (uint32_t i = 0; hold && hold->gone && i < n; i++)
			if (hold->gone(hold->arg, e->ids[i]) < 0)
				return -1;
	}
	if (n == e->nids) {
		free(e->ids);
		return 1;
	}
	/* What waits on is unwind's ids alone: a name in the item went out just now. */
	memmove(e->ids, e->ids + n, (e->nids - n) * sizeof(*e->ids));
	e->nids -= n;
	e->pid = e->tid = 0;
	return 0;
}

int
forget_round(struct forget_q *q, uint64_t time, uint32_t open_index,
	     const struct forget_hold *hold, struct stream_writer *out)
{
	size_t kept = 0;
	for (size_t i = 0; i < q->n; i++) {
		struct forget_item *e = &q->v[i];
		if (e->reused)
			continue;
		if (e->armed && e->window < open_index) {
			int rc = put_due(e, hold, out);
			if (rc < 0) {
				/* The rest are lost with the stream anyway. */
				free(e->ids);
				memmove(q->v + kept, q->v + i + 1, (q->n - i - 1) * sizeof(*q->v));
				q->n = kept + q->n - i - 1;
				return -1;
			}
			if (rc == 0)
				q->v[kept++] = *e;
			continue;
		}
		if (!e->armed && e->time <= time) {
			e->armed = 1;
			e->window = open_index;
		}
		q->v[kept++] = *e;
	}
	q->n = kept;
	/* The items moved: index them again (a round's cost is the items waiting). */
	idmap_clear(&q->by_tid);
	idmap_clear(&q->by_pid);
	for (size_t i = 0; i < q->n; i++)
		if (index_name(q, i) < 0)
			return -1;
	return 0;
}

void
forget_release(struct forget_q *q)
{
	idmap_release(&q->by_tid);
	idmap_release(&q->by_pid);
	for (size_t i = 0; i < q->n; i++)
		free(q->v[i].ids);
	free(q->v);
	q->v = NULL;
	q->n = q->cap = 0;
}
