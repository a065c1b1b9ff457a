/* libFuzzer target: emit-svg's frame handling (emit-svg/main.c's on_frame: window models,
 * flame trees and SVG files at each window end, CPU and off-CPU) on a whole stream, as the
 * stage reads it; and, for an input that is not a stream, --folded's reader of folded text
 * (folded.c) drawn as emit-svg --folded draws it.  Files go to a private directory. */
#include "stage.h"
#include "../emit-svg/main.c"
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

/* draw_folded on a buffer, the tree released whatever happens. */
static void
folded(const uint8_t *data, size_t size)
{
	static struct flame tree;
	struct tmpfile out = { .fd = fuzz_null_fd(), .path = "stdout", .name = "stdout" };
	struct folded_stats st = { 0 };
	struct svg_head h = { "Flame graph", "folded", "samples" };
	FILE *f = fmemopen((void *)data, size, "r");
	if (!f)
		return;
	if (flame_init(&tree, FLAME_MAX_NODES) < 0)
		abort();
	if (folded_read(f, &tree, s.frames, &st) == 0 && flame_sort(&tree) == 0) {
		bufout_init(&s.buf, &out);
		(void)svg_write(&tree, &h, &s.buf);
		(void)bufout_flush(&s.buf);
	}
	flame_release(&tree);
	fclose(f);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!fuzz_dir[0]) {
		env.output = fuzz_outdir();
		fuzz_null_fd();
		fuzz_fd_sweep();
	}
	if (size && (size < 8 || memcmp(data, STREAM_MAGIC, 8) != 0)) {
		folded(data, size);
		return 0;
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
		FUZZ_TRY(run());
		winmodel_release(&s.wm);
		winmodel_release(&s.off);
		stream_writer_release(&s.out);
	}
	stream_reader_release(&s.in);
	fuzz_fd_sweep();
	fuzz_dir_clean();
	return 0;
}
