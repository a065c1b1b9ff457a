/* libFuzzer target: aggregate's frame handling (aggregate/main.c's on_frame: the reorder
 * buffer, windows and their statistics, execs and held target frames, off-CPU pieces cut at
 * window ends, heap and page frames, the mappings in-use blocks name) on a whole stream, as the stage reads it after unwind.  The header's session
 * id picks the window (1 ms, 100 ms, 1 s, 60 s), the reorder window and small or large
 * bounds, so that forced releases and full windows are reached too. */
#include "stage.h"
#include "../aggregate/main.c"
#undef main
#undef exit

static struct agg a;

static void
run(void)
{
	struct frame f;
	int ended = 0;
	while (!ended && stream_read(&a.in, &f) > 0)
		ended = on_frame(&a, &f);
	while (ended && stream_read(&a.in, &f) > 0)
		if (stream_forward(&a.out, &f) < 0)
			errx(1, "%s", a.out.err);
	(void)stream_flush(&a.out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t windows[] = { 1000000, 100000000, 1000000000, 60000000000 };
	struct stream_header h;

	int fd = fuzz_input_fd(data, size);
	if (fd < 0)
		return 0;
	memset(&a, 0, sizeof(a));
	if (stream_reader_open(&a.in, fd, "stdin", &h) == 0) {
		uint64_t k = h.session_id;
		env.window_ns = windows[k & 3];
		env.reorder_ns = k & 4 ? 0 : env.window_ns / 10;
		env.max_pending = k & 8 ? 4 : 262144;
		env.max_stacks = k & 16 ? 3 : 65536;
		if (stream_writer_open(&a.out, fuzz_null_fd(), "stdout", &h) < 0 || agg_init(&a) < 0)
			abort();
		FUZZ_TRY(run());
		reorder_release(&a.ro);
		windows_release(&a.win);
		offcpu_agg_release_all(&a.off);
		heap_agg_release(&a.heap);
		physical_agg_release(&a.phys);
		forget_release(&a.forget);
		pins_release(&a.pins);
		stream_writer_release(&a.out);
	}
	stream_reader_release(&a.in);
	close(fd);
	return 0;
}
