/* libFuzzer target: fanout's main path (fanout/main.c's on_frame: every frame checked, the
 * window's frames kept for the branches, window ends held and released in order with their
 * statistics, then the drain after the end frame) on a whole stream, as fanout reads it
 * after emit-pprof.  No branch is started: the emitters' side runs in threads on FIFOs.
 * The header's session id picks --max-pending-windows 1..4. */
#include "stage.h"
#include "../fanout/main.c"
#undef main
#undef exit

static void
run(void)
{
	struct frame f;
	int ended = 0;
	while (!ended && stream_read(&F.in, &f) > 0)
		ended = on_frame(&f);
	if (ended) {
		while (stream_read(&F.in, &f) > 0)
			rawbuf_put(&F.outq, f.type, f.data, f.len);
		drain();
	}
	(void)stream_flush(&F.out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = fuzz_input_fd(data, size);
	if (fd < 0)
		return 0;
	memset(&F, 0, sizeof(F));
	if (stream_reader_open(&F.in, fd, "stdin", &F.hdr) == 0) {
		if (stream_writer_open(&F.out, fuzz_null_fd(), "stdout", &F.hdr) < 0)
			abort();
		F.max_pending = (unsigned)(F.hdr.session_id % 4) + 1;
		FUZZ_TRY(run());
		stream_writer_release(&F.out);
	}
	stream_reader_release(&F.in);
	rawbuf_free(&F.window);
	rawbuf_free(&F.outq);
	free(F.held);
	free(F.end);
	close(fd);
	return 0;
}
