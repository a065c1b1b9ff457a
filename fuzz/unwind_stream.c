/* libFuzzer target: the unwind stage's frame handling (unwind/main.c's on_frame) on a whole
 * stream: mappings and processes (procmaps.c, FR_FORK), kernel and capture symbols
 * (ksymtab.c, usymtab.c), frame-pointer stacks (fpstack.c), DWARF walks over the registers
 * and stack bytes a sample carries (dwarfstack.c, with the modules' CFI), and off-CPU
 * intervals with their stack-top words and stack copies (offcpu.c), all symbolized.
 *
 * Modules are found by build id in FUZZ_MODULE_CACHE (fuzz/modules: copies of bundled
 * workloads the seeds were recorded from), else at their paths.  The symbolizer and the CFI
 * tables outlive an input, as they do a stream (they are rebuilt now and then so that what
 * inputs name cannot pile up); everything else is per input.  Bit 0 of the header's session
 * id turns on --allow-partial. */
#include "stage.h"
#include "../unwind/main.c"
#undef main
#undef exit

static struct symbolizer *sym;
static struct stream_reader in;
static struct stream_writer out;
static struct resolver res;

static void
run(void)
{
	struct frame f;
	while (stream_read(&in, &f) > 0 && !on_frame(&res, &out, &f))
		;
	(void)stream_flush(&out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *dirs[] = { FUZZ_MODULE_CACHE };
	static unsigned inputs;
	struct stream_header h;

	if (inputs++ % 4096 == 0) {
		dwarfstack_release(&dw);
		symbolizer_free(sym);
		sym = symbolizer_new(NULL, 0, FUZZ_MODULE_CACHE);
		if (!sym || dwarfstack_init(&dw, 0, dirs, 1, 0) < 0)
			abort();
	}
	int fd = fuzz_input_fd(data, size);
	if (fd < 0)
		return 0;
	if (stream_reader_open(&in, fd, "stdin", &h) == 0) {
		if (stream_writer_open(&out, fuzz_null_fd(), "stdout", &h) < 0 ||
		    resolver_init(&res, &out, sym) < 0)
			abort();
		dw.machine = (uint16_t)h.e_machine;
		dw.allow_partial = (int)(h.session_id & 1);
		FUZZ_TRY(run());
		resolver_release(&res);
		stream_writer_release(&out);
	}
	stream_reader_release(&in);
	close(fd);
	return 0;
}
