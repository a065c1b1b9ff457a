/*
 * Streaming gzip (RFC 1952, one member) into a file descriptor, through zlib.
 * The caller owns the fd: gzfile never closes it.
 */
#ifndef RP_GZFILE_H
#define RP_GZFILE_H

#include <stddef.h>
#include <zlib.h>

struct gzfile {
	int fd;
	z_stream z;
	int active;             /* deflateInit2 succeeded and deflateEnd is still owed */
	unsigned char out[1 << 16];
	char err[200];
};

/* level: 1 (fast, what Go's pprof writer uses) .. 9, or Z_DEFAULT_COMPRESSION.
 * All functions return 0, or -1 with g->err set. */
int gzfile_open(struct gzfile *g, int fd, int level);
int gzfile_write(struct gzfile *g, const void *p, size_t n);
/* Writes the gzip trailer and frees zlib state; the fd stays open (fsync is the caller's). */
int gzfile_finish(struct gzfile *g);
/* Frees zlib state without finishing, after an error; safe to call twice. */
void gzfile_release(struct gzfile *g);

#endif
