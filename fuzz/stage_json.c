/* libFuzzer target: emit-json's frame handling (emit-json/main.c's callbacks on the emitter
 * skeleton: each window's stacks as JSON files, the heap deltas against the window before)
 * on a whole stream, as the stage reads it.  Bit 0 of the header's session id turns on
 * --pretty.  Files go to a private directory. */
#include "stage.h"
#include "../emit-json/main.c"
#undef main
#undef exit

/* The options, from the header's session id. */
static void
set_options(uint64_t id)
{
	pretty = (int)(id & 1);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_emitter(&json_ops, set_options, data, size);
	return 0;
}
