/*
 * streammaps STREAM: the distinct files a saved stream's FR_MMAP frames name, one line each
 * with its build id in hex ("-" without one) and its path, sorted:
 *
 *   streammaps rec.stream
 *   3f5c22c99c4e25eff3ec45a26d25ac2e07ca0c05 /usr/lib/gcc/x86_64-linux-gnu/12/cc1
 *   93ac61ec5a8eb1396f9fbd350e3169a558528a40 /usr/lib/x86_64-linux-gnu/libc.so.6
 *
 * The module cache tests compare the cache with what a recording mapped.  Built by
 * tests/modcache.bats against librp.a.
 */
#include <err.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream.h"

static int
cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int
main(int argc, char **argv)
{
	struct stream_reader r;
	struct stream_header h;
	struct frame f;
	char **lines = NULL, e[200];
	size_t n = 0, cap = 0;
	int rc;

	if (argc != 2)
		errx(2, "usage: streammaps STREAM");
	int fd = open(argv[1], O_RDONLY);
	if (fd < 0)
		err(1, "cannot open '%s'", argv[1]);
	if (stream_reader_open(&r, fd, argv[1], &h) < 0)
		errx(1, "%s", r.err);
	while ((rc = stream_read(&r, &f)) > 0) {
		struct fr_mmap m;
		char hex[2 * STREAM_BUILD_ID_MAX + 1] = "-", *line;
		if (f.type != FR_MMAP)
			continue;
		if (stream_get_mmap(&f, &m, e, sizeof(e)) < 0)
			errx(1, "%s: %s", argv[1], e);
		if (!m.path.len || m.path.p[0] != '/')
			continue;
		for (unsigned i = 0; i < m.build_id_len; i++)
			snprintf(hex + 2 * i, 3, "%02x", m.build_id[i]);
		if (asprintf(&line, "%s %.*s", hex, m.path.len, m.path.p) < 0)
			errx(1, "out of memory");
		if (n == cap && !(lines = realloc(lines, (cap = cap ? 2 * cap : 256) * sizeof(*lines))))
			errx(1, "out of memory");
		lines[n++] = line;
	}
	if (rc < 0)
		errx(1, "%s", r.err);
	if (n)
		qsort(lines, n, sizeof(*lines), cmp);
	for (size_t i = 0; i < n; i++)
		if (i == 0 || strcmp(lines[i], lines[i - 1]) != 0)
			puts(lines[i]);
	for (size_t i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
	stream_reader_release(&r);
	close(fd);
	return 0;
}
