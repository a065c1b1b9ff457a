/* stacktop: the main thread's stack copies cut after argc (see stacktop.h). */
#include "stacktop.h"

#include <stdlib.h>
#include <string.h>

#include "le.h"
#include "procfs.h"

uint32_t
stacktop_cut(uint64_t sp, const uint8_t *stack, uint32_t len, uint64_t top)
{
	if (!top || len < 24 || top <= sp || top - sp > len - 24)
		return len;
	uint64_t off = top - sp, words = (len - off) / 8;
	uint64_t argc = ld64(stack + off);
	/* argc, argc pointers and their NULL, all inside the copy */
	if (argc < 1 || argc > words - 2 || ld64(stack + off + 8 * (argc + 1)) != 0)
		return len;
	/* argv[0] points at the strings above the pointer arrays */
	uint64_t argv0 = ld64(stack + off + 8);
	if (argv0 <= top + 8 * (argc + 1) || argv0 - top > STACKTOP_ARGS_MAX)
		return len;
	return (uint32_t)(off + 8);
}

static size_t
slot_of(const struct stacktop *t, uint32_t pid)
{
	size_t i = (pid * 2654435761u) & (t->cap - 1);
	while (t->v[i].pid && t->v[i].pid != pid)
		i = (i + 1) & (t->cap - 1);
	return i;
}

/* The slot of pid, made when missing; NULL when out of memory. */
static struct stacktop_slot *
slot(struct stacktop *t, uint32_t pid)
{
	if (t->n + 1 > t->cap / 2) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		if (cap > 2 * STACKTOP_MAX_PROCESSES) {
			memset(t->v, 0, t->cap * sizeof(*t->v));
			t->n = 0;
			t->last_pid = 0;
		} else {
			struct stacktop old = *t;
			if (!(t->v = calloc(cap, sizeof(*t->v)))) {
				*t = old;
				return NULL;
			}
			t->cap = cap;
			for (size_t i = 0; i < old.cap; i++)
				if (old.v[i].pid)
					t->v[slot_of(t, old.v[i].pid)] = old.v[i];
			free(old.v);
		}
	}
	struct stacktop_slot *s = &t->v[slot_of(t, pid)];
	if (!s->pid) {
		*s = (struct stacktop_slot){ .pid = pid };
		t->n++;
	}
	return s;
}

uint32_t
stacktop_trim(struct stacktop *t, uint32_t pid, uint64_t sp, const uint8_t *stack,
	      uint32_t len)
{
	if (len < 24 || pid == 0)
		return len;
	uint64_t top;
	if (pid == t->last_pid) {
		top = t->last_top;
	} else {
		struct stacktop_slot *s = slot(t, pid);
		if (!s)
			return len;
		if (!s->known) {
			s->known = 1;
			if (procfs_start_stack((pid_t)pid, &s->top) < 0)
				s->top = 0;
		}
		t->last_pid = pid;
		top = t->last_top = s->top;
	}
	/* A deep stack, or another thread's: start_stack is not in the copy. */
	if (top <= sp || top - sp > len)
		return len;
	uint32_t n = stacktop_cut(sp, stack, len, top);
	if (n < len) {
		t->cut_samples++;
		t->cut_bytes += len - n;
	}
	return n;
}

void
stacktop_forget(struct stacktop *t, uint32_t pid)
{
	if (!t->cap || !pid)
		return;
	struct stacktop_slot *s = &t->v[slot_of(t, pid)];
	if (s->pid == pid)
		s->known = 0;
	if (t->last_pid == pid)
		t->last_pid = 0;
}

void
stacktop_free(struct stacktop *t)
{
	free(t->v);
	memset(t, 0, sizeof(*t));
}
