/* libFuzzer target: emit-collapsed's frame handling (emit-collapsed/main.c's callbacks on
 * the emitter skeleton: the window model folded into FlameGraph text files at each window
 * end, CPU and off-CPU) on a whole stream, as the stage reads it.  Bits 0 and 1 of the
 * header's session id turn on --annotate and --samples.  Files go to a private directory. */
#include "stage.h"
#include "../emit-collapsed/main.c"
#undef main
#undef exit

/* The options, from the header's session id. */
static void
set_options(uint64_t id)
{
	env.annotate = (int)(id & 1);
	env.samples = (int)(id >> 1 & 1);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_emitter(&collapsed_ops, set_options, data, size);
	return 0;
}
