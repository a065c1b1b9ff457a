/*
 * trimstream: a saved stream cut down to a seed for the fuzz targets.  Every frame is kept
 * except that at most N frames of each kind of sample or stack pass (FR_SAMPLE,
 * FR_SAMPLE_REGS, FR_OFFCPU, FR_STACK, FR_OFFCPU_STACK, FR_WINDOW_STACK,
 * FR_WINDOW_OFFCPU_STACK), a DWARF sample keeps at most BYTES of its stack copy, and an
 * off-CPU frame at most 8 further intervals.
 *
 * usage: trimstream N BYTES < stream > stream
 * Not part of the product: sh fuzz/seeds.sh streams runs it.
 */
#include <err.h>
#include <stdio.h>
#include <stdlib.h>

#include "stream.h"

static int
sampled(uint32_t type)
{
	return type == FR_SAMPLE || type == FR_SAMPLE_REGS || type == FR_OFFCPU ||
	       type == FR_STACK || type == FR_OFFCPU_STACK || type == FR_WINDOW_STACK ||
	       type == FR_WINDOW_OFFCPU_STACK;
}

int
main(int argc, char **argv)
{
	static struct stream_reader in;
	static struct stream_writer out;
	static struct fr_sample_regs sr;
	static struct fr_offcpu oc;
	static struct fr_offcpu_stack os;
	static unsigned kept[64];
	struct stream_header h;
	struct frame f;
	char e[200];
	int rc = 0;

	if (argc != 3)
		errx(2, "usage: trimstream N BYTES < stream > stream");
	unsigned max = (unsigned)atoi(argv[1]);
	uint32_t bytes = (uint32_t)atoi(argv[2]);
	if (stream_reader_open(&in, 0, "stdin", &h) < 0)
		errx(1, "stdin: %s", in.err);
	if (stream_writer_open(&out, 1, "stdout", &h) < 0)
		errx(1, "%s", out.err);
	while ((rc = stream_read(&in, &f)) > 0) {
		if (sampled(f.type) && kept[f.type % 64]++ >= max)
			continue;
		if (f.type == FR_SAMPLE_REGS && stream_get_sample_regs(&f, &sr, e, sizeof(e)) == 0) {
			if (sr.stack_len > bytes)
				sr.stack_len = bytes;
			rc = stream_put_sample_regs(&out, &sr);
		} else if (f.type == FR_OFFCPU && stream_get_offcpu(&f, &oc, e, sizeof(e)) == 0) {
			if (oc.nmore > 8)
				oc.nmore = 8;
			rc = stream_put_offcpu(&out, &oc);
		} else if (f.type == FR_OFFCPU_STACK &&
			   stream_get_offcpu_stack(&f, &os, e, sizeof(e)) == 0) {
			if (os.nmore > 8)
				os.nmore = 8;
			rc = stream_put_offcpu_stack(&out, &os);
		} else {
			rc = stream_forward(&out, &f);
		}
		if (rc < 0)
			errx(1, "%s", out.err);
	}
	if (rc < 0)
		errx(1, "stdin: %s", in.err);
	if (stream_flush(&out) < 0)
		errx(1, "%s", out.err);
	return 0;
}
