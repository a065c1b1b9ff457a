/* libFuzzer target: emit-pprof's frame handling (emit-pprof/main.c's on_frame: definitions,
 * windows and their stacks, CPU and off-CPU profiles encoded and gzipped into files at each
 * window end) on a whole stream, as the stage reads it after aggregate.  Files go to a
 * private directory, emptied after each input. */
#include "stage.h"
#include "../emit-pprof/main.c"
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
		defs_init(&s.defs);
		profile_init(&s.prof, &s.defs);
		profile_init(&s.off, &s.defs);
		s.off.offcpu = 1;
		FUZZ_TRY(run());
		gzfile_release(&s.gz);
		profile_release(&s.prof);
		profile_release(&s.off);
		defs_release(&s.defs);
		stream_writer_release(&s.out);
	}
	stream_reader_release(&s.in);
	fuzz_fd_sweep();
	fuzz_dir_clean();
	return 0;
}
