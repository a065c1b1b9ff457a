#include "fxfile.h"
#include "gzfile.h"
#include "jslb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Viewers load whole profiles anyway; level 6 makes a 65,536-sample window a third smaller
 * than level 1 for little time next to building it. */
#define GZIP_LEVEL 6

static struct gzfile gz;        /* large output buffer: keep it off the stack */

/* stdio cookie writes into the gzip stream, so the JSON writer can stream into it. */
static ssize_t
gz_cookie_write(void *c, const char *p, size_t n)
{
	return gzfile_write(c, p, n) < 0 ? -1 : (ssize_t)n;
}

static int
gz_put(void *c, const void *p, size_t n)
{
	return gzfile_write(c, p, n);
}

static int
write_json(const struct fxmodel *m, const struct timeline *t, const struct fxmeta *meta,
	   char *err, size_t errlen)
{
	cookie_io_functions_t io = { .write = gz_cookie_write };
	FILE *f = fopencookie(&gz, "w", io);
	int rc;

	if (!f) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	setvbuf(f, NULL, _IOFBF, 1 << 16);
	rc = fxwrite(f, NULL, m, t, meta, err, errlen);
	if (fclose(f) != 0 && rc == 0) {
		snprintf(err, errlen, "%s", gz.err[0] ? gz.err : "write error");
		rc = -1;
	}
	return rc;
}

static int
write_jslb(const struct fxmodel *m, const struct timeline *t, const struct fxmeta *meta,
	   char *err, size_t errlen)
{
	struct jslb b;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	long root;
	int rc;

	jslb_init(&b);
	if (!f) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rc = fxwrite(f, &b, m, t, meta, err, errlen);
	if (fclose(f) != 0 && rc == 0) {
		snprintf(err, errlen, "out of memory");
		rc = -1;
	}
	if (rc == 0 && (root = jslb_add_json(&b, text, len)) < 0) {
		snprintf(err, errlen, "%s", b.err);
		rc = -1;
	}
	if (rc == 0) {
		b.root = (uint32_t)root;
		if (jslb_write(&b, gz_put, &gz) < 0) {
			snprintf(err, errlen, "%s", gz.err[0] ? gz.err : b.err);
			rc = -1;
		}
	}
	free(text);
	jslb_release(&b);
	return rc;
}

int
fxfile_write(int fd, enum fx_format fmt, const struct fxmodel *m, const struct timeline *t,
	     const struct fxmeta *meta, char *err, size_t errlen)
{
	int rc;

	if (gzfile_open(&gz, fd, GZIP_LEVEL) < 0) {
		snprintf(err, errlen, "%s", gz.err);
		return -1;
	}
	gz.err[0] = 0;
	rc = fmt == FX_JSLB ? write_jslb(m, t, meta, err, errlen)
			    : write_json(m, t, meta, err, errlen);
	if (rc == 0 && gzfile_finish(&gz) < 0) {
		snprintf(err, errlen, "%s", gz.err);
		rc = -1;
	}
	gzfile_release(&gz);
	return rc;
}
