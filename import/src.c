/*
 * The capture's bytes.  A regular file is mapped whole (the kernel pages it in and out, so
 * memory stays flat); a pipe is read forward through a buffer that keeps only the bytes from
 * the record being parsed on, so a capture of any length needs one record's worth of memory.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "import.h"

int
src_open_fd(struct src *s, int fd, char *err, size_t errlen)
{
	struct stat st;
	memset(s, 0, sizeof(*s));
	s->fd = -1;
	if (fstat(fd, &st) < 0) {
		snprintf(err, errlen, "%s", strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		s->fd = fd;
		return 0;
	}
	s->size = (size_t)st.st_size;
	if (s->size == 0) {
		s->map = (const uint8_t *)"";
		return 0;
	}
	void *p = mmap(NULL, s->size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED) {
		snprintf(err, errlen, "mmap: %s", strerror(errno));
		return -1;
	}
	madvise(p, s->size, MADV_SEQUENTIAL);
	s->map = p;
	s->mapped = 1;
	return 0;
}

void
src_open_mem(struct src *s, const uint8_t *p, size_t n)
{
	memset(s, 0, sizeof(*s));
	s->fd = -1;
	s->map = p;
	s->size = n;
}

/* Reads until the buffer holds [off, off + n) or the pipe ends. */
static const uint8_t *
pipe_get(struct src *s, uint64_t off, size_t n)
{
	if (off < s->base)
		return NULL; /* a backward read: a parser bug, reported as corrupt input */
	size_t drop = off - s->base < s->size ? (size_t)(off - s->base) : s->size;
	if (drop) { /* never with the buffer not yet allocated (NULL) */
		memmove(s->buf, s->buf + drop, s->size - drop);
		s->size -= drop;
		s->base += drop;
	}
	if (off != s->base)
		return NULL;
	while (s->size < n && !s->eof) {
		if (s->cap < n) {
			size_t cap = n < 65536 ? 65536 : n;
			uint8_t *b = realloc(s->buf, cap);
			if (!b)
				return NULL;
			s->buf = b;
			s->cap = cap;
		}
		ssize_t r = read(s->fd, s->buf + s->size, s->cap - s->size);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			s->eof = 1;
		else
			s->size += (size_t)r;
	}
	return s->size >= n ? s->buf : NULL;
}

const uint8_t *
src_get(struct src *s, uint64_t off, size_t n)
{
	if (s->fd >= 0)
		return pipe_get(s, off, n);
	if (off > s->size || n > s->size - off)
		return NULL;
	return s->map + off;
}

/* The parser is past off and never reads before it again (records kept for ordering are
 * copies): drop the mapped pages before it, so the resident size of a mapped capture stays
 * at the window being read instead of growing to the file's size.  The pages stay in the
 * page cache; only this process's share of them goes. */
void
src_done(struct src *s, uint64_t off)
{
	const uint64_t step = 8u << 20;
	if (!s->mapped || off < s->released + step)
		return;
	uint64_t end = off & ~(step - 1);
	madvise((void *)(s->map + s->released), (size_t)(end - s->released), MADV_DONTNEED);
	s->released = end;
}

void
src_close(struct src *s)
{
	if (s->mapped)
		munmap((void *)s->map, s->size);
	free(s->buf);
	memset(s, 0, sizeof(*s));
	s->fd = -1;
}
