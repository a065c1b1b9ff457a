#include "body.h"

#include <stdlib.h>
#include <zlib.h>

/* As for the pprof files: level 1 keeps most of the gain for a fraction of the time. */
#define GZIP_LEVEL 1

int
body_gzip(const uint8_t *in, size_t n, uint8_t **out, size_t *outn)
{
	z_stream z = { 0 };
	uLong cap;
	int rc;

	*out = NULL;
	/* windowBits 15 + 16: a gzip header and trailer around the deflate data. */
	if (deflateInit2(&z, GZIP_LEVEL, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	cap = deflateBound(&z, (uLong)n) + 32;
	if (!(*out = malloc(cap))) {
		deflateEnd(&z);
		return -1;
	}
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)n;
	z.next_out = *out;
	z.avail_out = (uInt)cap;
	rc = deflate(&z, Z_FINISH);
	*outn = cap - z.avail_out;
	deflateEnd(&z);
	if (rc != Z_STREAM_END) {
		free(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}
