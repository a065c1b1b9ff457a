/* libFuzzer target: emit-firefox's frame handling (emit-firefox/main.c's on_frame: the
 * definitions, the timeline of samples and off-CPU intervals, the Firefox Profiler model and
 * its JSON or JSLB file at each window end) on a whole stream, as the stage reads it.  Bit 0
 * of the header's session id picks JSLB, bit 1 a timeline of 16 samples (--max-timeline-
 * samples) instead of 65536.  Files go to a private directory. */
#include "stage.h"
#include "../emit-firefox/main.c"
#undef main
#undef exit

static struct state s;

static void
run(void)
{
	struct frame f;
	while (stream_read(&s.in, &f) > 0)
		on_frame(&s, &f);
	(void)stream_flush(&s.out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!fuzz_dir[0]) {
		env.output = fuzz_outdir();
		fuzz_null_fd();
		fuzz_fd_sweep();
	}
	int fd = fuzz_input_fd(data, size);
	if (fd < 0)
		return 0;
	memset(&s, 0, sizeof(s));
	if (stream_reader_open(&s.in, fd, "stdin", &s.hdr) == 0) {
		if (stream_writer_open(&s.out, fuzz_null_fd(), "stdout", &s.hdr) < 0)
			abort();
		env.format = s.hdr.session_id & 1 ? FX_JSLB : FX_JSON;
		env.max_samples = s.hdr.session_id & 2 ? 16 : 65536;
		defs_init(&s.defs);
		timeline_init(&s.tl, env.max_samples);
		fxmodel_init(&s.model, &s.defs);
		FUZZ_TRY(run());
		fxmodel_release(&s.model);
		timeline_release(&s.tl);
		defs_release(&s.defs);
		stream_writer_release(&s.out);
	}
	stream_reader_release(&s.in);
	fuzz_fd_sweep();
	fuzz_dir_clean();
	return 0;
}
