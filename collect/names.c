/* The names of the threads (names.h): open addressing on the tid, never shrunk, as tids are
 * few and reused by the kernel. */
#include "names.h"

#include <err.h>
#include <stdlib.h>
#include <string.h>

static size_t
slot_of(const struct names *t, uint32_t tid)
{
	size_t i = (size_t)(tid * 2654435761u) & (t->cap - 1);
	while (t->v[i].tid && t->v[i].tid != tid)
		i = (i + 1) & (t->cap - 1);
	return i;
}

static void
grow(struct names *t)
{
	struct names bigger = { .cap = t->cap ? t->cap * 2 : 256 };
	bigger.v = calloc(bigger.cap, sizeof(*bigger.v));
	if (!bigger.v)
		errx(1, "out of memory");
	for (size_t i = 0; i < t->cap; i++)
		if (t->v[i].tid)
			bigger.v[slot_of(&bigger, t->v[i].tid)] = t->v[i];
	bigger.n = t->n;
	free(t->v);
	*t = bigger;
}

void
names_set(struct names *t, uint32_t tid, const char *comm, size_t len, uint64_t time)
{
	if (!tid)
		return; /* the idle task names nobody's samples */
	if ((t->n + 1) * 2 > t->cap)
		grow(t);
	struct name_slot *s = &t->v[slot_of(t, tid)];
	if (!s->tid) {
		s->tid = tid;
		t->n++;
	}
	if (len > NAMES_LEN - 1)
		len = NAMES_LEN - 1;
	memcpy(s->comm, comm, len);
	s->comm[len] = 0;
	s->time = time;
}

int
names_set_since(const struct names *t, uint32_t tid, uint64_t time)
{
	if (!t->cap || !tid)
		return 0;
	const struct name_slot *s = &t->v[slot_of(t, tid)];
	return s->tid && s->time >= time;
}

const char *
names_get(const struct names *t, uint32_t tid)
{
	if (!t->cap || !tid)
		return NULL;
	const struct name_slot *s = &t->v[slot_of(t, tid)];
	return s->tid ? s->comm : NULL;
}

void
names_free(struct names *t)
{
	free(t->v);
	*t = (struct names){ 0 };
}
