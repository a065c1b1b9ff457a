/* libFuzzer target: the stream reader and every frame decoder on arbitrary bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stream.h"

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
	if (stream_reader_open(&r, p[0], "fuzz", &h) == 0)
		while (stream_read(&r, &f) > 0)
			(void)stream_check_frame(&f, err, sizeof(err));
	stream_reader_release(&r);
	close(p[0]);
	return 0;
}
