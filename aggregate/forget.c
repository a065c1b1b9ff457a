/* FR_FORGET after the window that may still name an ended thread (see forget.h). */
#include "forget.h"

#include <stdlib.h>

#include "grow.h"

int
forget_push(struct forget_q *q, const struct fr_task *t)
{
	if (!t->pid)
		return 0;
	if (grow_array((void **)&q->v, &q->cap, q->n, 1, sizeof(*q->v)) < 0)
		return -1;
	q->v[q->n++] = (struct forget_exit){ .time = t->time, .pid = t->pid, .tid = t->tid,
					     .flags = t->flags };
	return 0;
}

int
forget_round(struct forget_q *q, uint64_t time, uint32_t open_index, struct stream_writer *out)
{
	size_t kept = 0;
	for (size_t i = 0; i < q->n; i++) {
		struct forget_exit *e = &q->v[i];
		if (e->armed && e->window < open_index) {
			/* The main thread's name is the process's: it goes with the process
			 * (its other threads may outlive the main one). */
			struct fr_forget f = { e->pid, e->tid };
			if (e->tid != e->pid && stream_put_forget(out, &f) < 0)
				return -1;
			f.tid = 0;
			if ((e->flags & EXIT_PROCESS) && stream_put_forget(out, &f) < 0)
				return -1;
			continue;
		}
		if (!e->armed && e->time <= time) {
			e->armed = 1;
			e->window = open_index;
		}
		q->v[kept++] = *e;
	}
	q->n = kept;
	return 0;
}

void
forget_release(struct forget_q *q)
{
	free(q->v);
	q->v = NULL;
	q->n = q->cap = 0;
}
