/* stacktop: the main thread's stack copies cut after argc (see stacktop.h). */
#include "stacktop.h"

#include <stdlib.h>
#include <string.h>

#include "le.h"
#include "procfs.h"

#define UNREAD UINT64_MAX /* a start_stack not read yet (no process has this one) */

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

/* pid's index in t->top, made when missing (the table starts again past its bound); -1
 * when out of memory. */
static int64_t
slot(struct stacktop *t, uint32_t pid)
{
	uint32_t i;
	if (idmap_get(&t->slot, pid, &i))
		return i;
	if (t->n == STACKTOP_MAX_PROCESSES) {
		idmap_clear(&t->slot);
		t->n = 0;
		t->last_pid = 0;
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		uint64_t *top = realloc(t->top, cap * sizeof(*top));
		if (!top)
			return -1;
		t->top = top;
		t->cap = cap;
	}
	if (idmap_put(&t->slot, pid, (uint32_t)t->n) < 0)
		return -1;
	t->top[t->n] = UNREAD;
	return (int64_t)t->n++;
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
		int64_t i = slot(t, pid);
		if (i < 0)
			return len;
		if (t->top[i] == UNREAD && procfs_start_stack((pid_t)pid, &t->top[i]) < 0)
			t->top[i] = 0;
		t->last_pid = pid;
		top = t->last_top = t->top[i];
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
	uint32_t i;
	if (idmap_get(&t->slot, pid, &i))
		t->top[i] = UNREAD;
	if (t->last_pid == pid)
		t->last_pid = 0;
}

void
stacktop_free(struct stacktop *t)
{
	idmap_release(&t->slot);
	free(t->top);
	memset(t, 0, sizeof(*t));
}
