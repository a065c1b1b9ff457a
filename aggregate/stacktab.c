#include "stacktab.h"
#include "stackset.h"

#include <stdlib.h>
#include <string.h>

int
stacktab_init(struct stacktab *t, size_t max)
{
	memset(t, 0, sizeof(*t));
	t->max = max;
	t->nslots = 1024;
	t->slots = calloc(t->nslots, sizeof(*t->slots));
	return t->slots ? 0 : -1;
}

static int
grow(struct stacktab *t)
{
	size_t n = t->nslots * 2;
	struct stack_entry **s = calloc(n, sizeof(*s));
	if (!s)
		return -1;
	for (size_t i = 0; i < t->nslots; i++) {
		struct stack_entry *e = t->slots[i];
		if (!e)
			continue;
		size_t j = e->hash & (n - 1);
		while (s[j])
			j = (j + 1) & (n - 1);
		s[j] = e;
	}
	free(t->slots);
	t->slots = s;
	t->nslots = n;
	return 0;
}

int
stacktab_add(struct stacktab *t, uint32_t pid, uint32_t tid, const uint32_t *locs,
	     uint16_t nlocs, uint64_t count, uint64_t nanos)
{
	uint64_t h = stack_key_hash(pid, tid, locs, nlocs);
	size_t j = h & (t->nslots - 1);
	for (struct stack_entry *e; (e = t->slots[j]); j = (j + 1) & (t->nslots - 1)) {
		if (e->hash == h && e->pid == pid && e->tid == tid && e->nlocs == nlocs &&
		    memcmp(e->locs, locs, nlocs * sizeof(*locs)) == 0) {
			e->count += count;
			e->nanos += nanos;
			return 1;
		}
	}
	if (t->n >= t->max)
		return 0;
	struct stack_entry *e = malloc(sizeof(*e) + nlocs * sizeof(*locs));
	if (!e)
		return -1;
	*e = (struct stack_entry){ .hash = h, .count = count, .nanos = nanos, .pid = pid,
				   .tid = tid, .nlocs = nlocs };
	memcpy(e->locs, locs, nlocs * sizeof(*locs));
	t->slots[j] = e;
	t->n++;
	/* Keep the load under one half so probes stay short. */
	if (t->n * 2 > t->nslots && grow(t) < 0)
		return -1;
	return 1;
}

void
stacktab_clear(struct stacktab *t)
{
	for (size_t i = 0; i < t->nslots; i++) {
		free(t->slots[i]);
		t->slots[i] = NULL;
	}
	t->n = 0;
}

void
stacktab_release(struct stacktab *t)
{
	if (!t->slots)
		return;
	stacktab_clear(t);
	free(t->slots);
	t->slots = NULL;
}
