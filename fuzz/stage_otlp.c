/* libFuzzer target: emit-otlp's frame handling (emit-otlp/main.c's callbacks on the emitter
 * skeleton: the definitions, the target's resource, the timeline, and at each window end
 * the encoding of the whole window into one request and its gzip) on a whole stream, as
 * the stage reads it, with no network: the export thread is not started and each queued
 * body is thrown away after its window, so every window is encoded.  Bit 0 of the
 * header's session id picks gzip, bit 1 the timeline, bit 2 a timeline of 16 samples. */
#include "stage.h"
#include "../emit-otlp/main.c"
#undef main
#undef exit

static void
set_options(uint64_t id)
{
	env.timeline = (id & 2) != 0;
	env.max_samples = id & 4 ? 16 : RP_DEFAULT_MAX_TIMELINE_SAMPLES;
	memset(&ended, 0, sizeof(ended));       /* an input that stopped left it */
	memset(&s.cfg, 0, sizeof(s.cfg));
	s.cfg.enabled = 1;
	s.cfg.gzip = id & 1;
	memset(&s.x, 0, sizeof(s.x));
	s.x.cfg = &s.cfg;
	pthread_mutex_init(&s.x.mu, NULL);
	pthread_cond_init(&s.x.cv, NULL);
}

/* init without the export thread. */
static void
fuzz_init(struct emitter *e)
{
	encoder_init(&s.enc, &e->defs);
	timeline_init(&s.tl, env.max_samples);
	resource_build(&s.res, &s.cfg, &s.tgt);
}

/* Each frame as the stage has it, then the body it queued dropped: the queue never
 * fills. */
static const char *
fuzz_before(struct emitter *e, const struct frame *f)
{
	const char *why = before(e, f);

	while (s.x.n) {
		free(s.x.q[s.x.head].body);
		s.x.head = (s.x.head + 1) % EXPORT_QUEUE;
		s.x.n--;
	}
	return why;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct emitter_ops ops;

	ops = otlp_ops;
	ops.init = fuzz_init;
	ops.before = fuzz_before;
	fuzz_emitter(&ops, set_options, data, size);
	return 0;
}
