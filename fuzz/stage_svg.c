/* libFuzzer target: emit-svg's frame handling (emit-svg/main.c's callbacks on the emitter
 * skeleton: the window model, flame trees and SVG files at each window end, CPU and off-CPU)
 * on a whole stream, as the stage reads it; and, for an input that is not a stream,
 * --folded's reader of folded text (folded.c) drawn as emit-svg --folded draws it.  Files go
 * to a private directory. */
#include "stage.h"
#include "../emit-svg/main.c"
#undef main
#undef exit

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
	if (size && (size < 8 || memcmp(data, STREAM_MAGIC, 8) != 0))
		folded(data, size);
	else
		fuzz_emitter(&svg_ops, NULL, data, size);
	return 0;
}
