/* libFuzzer target: unwind's jitdump parser (jitparse.c) on arbitrary bytes, the target's
 * to shape (jit-PID.dump: header, load, move, debug, unwinding and close records).  The
 * input is fed in two parts, as a file read while it grows is, and every symbol kept is
 * looked up: it must hold its bounds and a name within the cap. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../unwind/jitparse.h"

static volatile size_t sink;

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct jittab t;
	struct jitdump_state s = { 0 };
	jittab_init(&t);
	size_t cut = size ? data[0] % (size + 1) : 0;
	long a = jit_dump_parse(&t, &s, data, cut);
	if (a >= 0) {
		if ((size_t)a > cut)
			abort();
		long b = jit_dump_parse(&t, &s, data + a, size - (size_t)a);
		if (b > (long)(size - (size_t)a))
			abort();
	}
	for (size_t i = 0; i < t.n && i < 1000; i++) {
		const struct jitsym *e = &t.v[i];
		if (e->end <= e->start || strlen(e->name) > JIT_MAX_NAME)
			abort();
		uint64_t a = e->start; /* the first lookup sorts the table */
		const struct jitsym *f = jittab_find(&t, a);
		if (!f || f->start > a || f->end <= a)
			abort();
		sink += strlen(f->name);
	}
	jittab_release(&t);
	return 0;
}
