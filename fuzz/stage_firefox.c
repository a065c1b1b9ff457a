/* libFuzzer target: emit-firefox's frame handling (emit-firefox/main.c's callbacks on the
 * emitter skeleton: the definitions, the timeline of samples and off-CPU intervals, the
 * Firefox Profiler model and its JSON or JSLB file at each window end) on a whole stream, as
 * the stage reads it.  Bit 0 of the header's session id picks JSLB, bit 1 a timeline of 16
 * samples (--max-timeline-samples) instead of 65536.  Files go to a private directory. */
#include "stage.h"
#include "../emit-firefox/main.c"
#undef main
#undef exit

/* The options, from the header, before the stage's own init. */
static void
fuzz_init(struct emitter *e)
{
	env.format = e->hdr.session_id & 1 ? FX_JSLB : FX_JSON;
	env.max_samples = e->hdr.session_id & 2 ? 16 : 65536;
	firefox_ops.init(e);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct emitter_ops ops;

	ops = firefox_ops;
	ops.init = fuzz_init;
	fuzz_emitter(&ops, data, size);
	return 0;
}
