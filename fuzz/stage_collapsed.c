/* libFuzzer target: emit-collapsed's frame handling (emit-collapsed/main.c's callbacks on
 * the emitter skeleton: the window model folded into FlameGraph text files at each window
 * end, CPU and off-CPU) on a whole stream, as the stage reads it.  Bits 0 and 1 of the
 * header's session id turn on --annotate and --samples.  Files go to a private directory. */
#include "stage.h"
#include "../emit-collapsed/main.c"
#undef main
#undef exit

/* The options, from the header, before the stage's own init. */
static void
fuzz_init(struct emitter *e)
{
	env.annotate = (int)(e->hdr.session_id & 1);
	env.samples = (int)(e->hdr.session_id >> 1 & 1);
	collapsed_ops.init(e);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct emitter_ops ops;

	ops = collapsed_ops;
	ops.init = fuzz_init;
	fuzz_emitter(&ops, data, size);
	return 0;
}
