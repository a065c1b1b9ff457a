#include "body.h"

#include <stdlib.h>
#include <zlib.h>

/* As for the pprof files: level 1 keeps most of the gain for a fraction of the time. */
#define GZIP_LEVEL 1

/* One deflate state for the stage's life: deflateReset reuses its few hundred KiB, which
 * a new state per window would map and fault in again each time.  The main thread only. */
static z_stream z;
static int ready;

int
body_gzip(const uint8_t *in, size_t n, uint8_t **out, size_t *outn)
{
	uLong cap;
	int rc;

	*out = NULL;
	/* windowBits 15 + 16: a gzip header and trailer around the deflate data. */
	if (!ready && deflateInit2(&z, GZIP_LEVEL, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	ready = 1;
	if (deflateReset(&z) != Z_OK)
		return -1;
	cap = deflateBound(&z, (uLong)n) + 32;
	if (!(*out = malloc(cap)))
		return -1;
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)n;
	z.next_out = *out;
	z.avail_out = (uInt)cap;
	rc = deflate(&z, Z_FINISH);
	*outn = cap - z.avail_out;
	if (rc != Z_STREAM_END) {
		free(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

void
body_release(void)
{
	if (ready)
		deflateEnd(&z);
	ready = 0;
}
