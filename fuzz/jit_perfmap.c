/* libFuzzer target: unwind's perf map parser (jitparse.c) on arbitrary text, the target's
 * to shape (/tmp/perf-PID.map).  The input is fed in two parts, as a file read while it
 * grows is, and every address is then looked up: whatever was kept must hold its bounds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../unwind/jitparse.h"

static volatile size_t sink;

static void
probe(struct jittab *t)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct jitsym *s = &t->v[i];
		if (s->end <= s->start || strlen(s->name) > JIT_MAX_NAME || !s->name[0])
			abort();
	}
	for (size_t i = 0; i < t->n && i < 1000; i++) {
		uint64_t a = t->v[i].start;
		const struct jitsym *s = jittab_find(t, a);
		if (!s || a < s->start || a >= s->end)
			abort();
		sink += strlen(s->name) + (jittab_find(t, a - 1) != NULL);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jittab t;
	jittab_init(&t);
	size_t half = size / 2;
	long a = jit_perfmap_parse(&t, (const char *)data, half);
	if (a >= 0) {
		if ((size_t)a > half)
			abort();
		long b = jit_perfmap_parse(&t, (const char *)data + a, size - (size_t)a);
		if (b > (long)(size - (size_t)a))
			abort();
	}
	probe(&t);
	jittab_release(&t);
	return 0;
}
