#include "gzfile.h"
#include "fsutil.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

int
gzfile_open(struct gzfile *g, int fd, int level)
{
	int rc;

	memset(&g->z, 0, sizeof(g->z));
	g->fd = fd;
	g->err[0] = 0;
	g->active = 0;
	/* windowBits 15 + 16 asks zlib for a gzip header and trailer instead of zlib's. */
	rc = deflateInit2(&g->z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
	if (rc != Z_OK) {
		snprintf(g->err, sizeof(g->err), "cannot start gzip: zlib error %d", rc);
		return -1;
	}
	g->active = 1;
	return 0;
}

static int
write_all(struct gzfile *g, const unsigned char *p, size_t n)
{
	if (fs_write_all(g->fd, p, n) < 0) {
		snprintf(g->err, sizeof(g->err), "write: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* Runs deflate with flush until it needs more input (or, for Z_FINISH, is done). */
static int
gz_pump(struct gzfile *g, int flush)
{
	int rc;

	do {
		g->z.next_out = g->out;
		g->z.avail_out = sizeof(g->out);
		rc = deflate(&g->z, flush);
		if (rc == Z_STREAM_ERROR) {
			snprintf(g->err, sizeof(g->err), "gzip: zlib stream error");
			return -1;
		}
		if (write_all(g, g->out, sizeof(g->out) - g->z.avail_out) < 0)
			return -1;
	} while (g->z.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
	return 0;
}

int
gzfile_write(struct gzfile *g, const void *p, size_t n)
{
	const unsigned char *c = p;

	if (!g->active) {
		snprintf(g->err, sizeof(g->err), "gzip: write after finish");
		return -1;
	}
	/* avail_in is a uInt: feed large buffers in slices. */
	while (n) {
		uInt chunk = n > UINT_MAX / 2 ? UINT_MAX / 2 : (uInt)n;

		g->z.next_in = (Bytef *)c;
		g->z.avail_in = chunk;
		if (gz_pump(g, Z_NO_FLUSH) < 0)
			return -1;
		c += chunk;
		n -= chunk;
	}
	return 0;
}

int
gzfile_finish(struct gzfile *g)
{
	int rc;

	if (!g->active) {
		snprintf(g->err, sizeof(g->err), "gzip: finish without open");
		return -1;
	}
	g->z.next_in = NULL;
	g->z.avail_in = 0;
	rc = gz_pump(g, Z_FINISH);
	gzfile_release(g);
	return rc;
}

void
gzfile_release(struct gzfile *g)
{
	if (g->active)
		deflateEnd(&g->z);
	g->active = 0;
}
