/*
 * libFuzzer target: the stream reader and, by the frame table, every frame decoder and
 * encoder on arbitrary bytes.  Each frame read is decoded as every type of the table (so
 * every decoder sees every payload); what decodes is encoded again, and that encoding must
 * decode and encode back to the same bytes: the two directions of a row agree on every
 * field, and the encoder writes whatever the decoder accepts.  A disagreement aborts.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frametab.h"

static union stream_any_frame v1, v2;
static struct stream_writer enc;  /* its encoding buffer only */
static uint8_t once[1 << 17]; /* inputs are 64 KiB at most; absent groups add a few bytes */

static void
round_trip(const struct frame *f)
{
	char err[200];
	uint32_t n, m;
	const uint8_t *p;

	if (stream_get_frame(f, &v1, err, sizeof(err)) < 0)
		return;
	if (!(p = stream_frame_encode(&enc, f->type, &v1, &n)))
		abort(); /* a frame the decoder takes, the encoder refuses */
	if (n > sizeof(once))
		abort();
	memcpy(once, p, n);
	struct frame g = { f->type, n, once };
	if (stream_get_frame(&g, &v2, err, sizeof(err)) < 0 ||
	    !(p = stream_frame_encode(&enc, f->type, &v2, &m)) || m != n || memcmp(p, once, n))
		abort(); /* the encoding does not read back as itself */
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int p[2];
	if (size > 1 << 16 || pipe(p) < 0)
		return 0;
	if (write(p[1], data, size) != (ssize_t)size)
		abort();
	close(p[1]);
	struct stream_reader r;
	struct stream_header h;
	struct frame f;
	char err[200];
	if (stream_reader_open(&r, p[0], "fuzz", &h) == 0) {
		r.order.rules = ORDER_NONE; /* the rules are fuzzed elsewhere: every frame here */
		while (stream_read(&r, &f) > 0) {
			(void)stream_check_frame(&f, err, sizeof(err));
			for (uint32_t t = 0; t < stream_frame_types(); t++) {
				struct frame as = { t, f.len, f.data };
				if (stream_frame_desc(t))
					round_trip(&as);
			}
		}
	}
	stream_reader_release(&r);
	close(p[0]);
	return 0;
}
