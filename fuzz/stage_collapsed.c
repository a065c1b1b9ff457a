/* libFuzzer target: emit-collapsed's frame handling (emit-collapsed/main.c's on_frame:
 * window models folded into FlameGraph text files at each window end, CPU and off-CPU) on a
 * whole stream, as the stage reads it.  Bits 0 and 1 of the header's session id turn on
 * --annotate and --samples.  Files go to a private directory. */
#include "stage.h"
#include "../emit-collapsed/main.c"
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
	memset(&s.in, 0, sizeof(s.in));
	memset(&s.out, 0, sizeof(s.out));
	if (stream_reader_open(&s.in, fd, "stdin", &s.hdr) == 0) {
		if (stream_writer_open(&s.out, fuzz_null_fd(), "stdout", &s.hdr) < 0)
			abort();
		winmodel_init(&s.wm);
		winmodel_init(&s.off);
		s.off.offcpu = 1;
		fold_init(&s.fold);
		s.fold.annotate = (int)(s.hdr.session_id & 1);
		s.fold.samples = (int)(s.hdr.session_id >> 1 & 1);
		FUZZ_TRY(run());
		fold_release(&s.fold);
		winmodel_release(&s.wm);
		winmodel_release(&s.off);
		stream_writer_release(&s.out);
	}
	stream_reader_release(&s.in);
	fuzz_fd_sweep();
	fuzz_dir_clean();
	return 0;
}
