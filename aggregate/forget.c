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
forget_round(struct forget_q *q, uint64_t time, uint32_t open_index, struct stream_writer *out)
{
	size_t kept = 0;
	for (size_t i = 0; i < q->n; i++) {
		struct forget_item *e = &q->v[i];
		if (e->reused)
			continue;
		if (e->armed && e->window < open_index) {
			struct fr_forget f = { .pid = e->pid, .tid = e->tid, .n = e->nids };
			int rc = stream_put_forget(out, &f, e->ids);
			free(e->ids);
			if (rc < 0) {
				/* The rest are lost with the stream anyway. */
				memmove(q->v + kept, q->v + i + 1, (q->n - i - 1) * sizeof(*q->v));
				q->n = kept + q->n - i - 1;
				return -1;
			}
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
