/* libFuzzer target: emit-pprof's frame handling (emit-pprof/main.c's callbacks on the
 * emitter skeleton: definitions, windows and their stacks, CPU and off-CPU profiles encoded
 * and gzipped into files at each window end) on a whole stream, as the stage reads it after
 * aggregate.  Files go to a private directory, emptied after each input. */
#include "stage.h"
#include "../emit-pprof/main.c"
#undef main
#undef exit

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_emitter(&pprof_ops, NULL, data, size);
	return 0;
}
