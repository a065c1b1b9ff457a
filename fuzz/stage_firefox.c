/* libFuzzer target: emit-firefox's frame handling (emit-firefox/main.c's callbacks on the
 * emitter skeleton: the definitions, the timeline of samples and off-CPU intervals, the
 * Firefox Profiler model and its JSON or JSLB file at each window end) on a whole stream, as
 * the stage reads it.  Bit 0 of the header's session id picks JSLB, bit 1 a timeline of 16
 * samples (--max-timeline-samples) instead of the default.  Files go to a private
 * directory. */
#include "stage.h"
#include "../emit-firefox/main.c"
#undef main
#undef exit

/* The options, from the header's session id. */
static void
set_options(uint64_t id)
{
	env.format = id & 1 ? FX_JSLB : FX_JSON;
	env.max_samples = id & 2 ? 16 : RP_DEFAULT_MAX_TIMELINE_SAMPLES;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_emitter(&firefox_ops, set_options, data, size);
	return 0;
}
