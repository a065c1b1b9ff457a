/*
 * Framed stream reader and writer; the byte layout is docs/stream-format.md.
 * The reader trusts nothing: every length is checked before it is used.
 */
#include "stream.h"
#include "le.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define READ_CHUNK (1u << 16)
#define WRITE_BUF (1u << 18)
#define MAP_RELEASE (8u << 20) /* mapped bytes read before they are given back */

static void
seterr(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

/* ---- reading ---- */

/* A regular file (a saved stream) is read through a mapping: no copy of the bulk of it
 * (sample stacks the walk never touches) into the process.  Anything else is read(). */
static void
map_input(struct stream_reader *r)
{
	struct stat st;
	off_t at = lseek(r->fd, 0, SEEK_CUR);
	if (at < 0 || fstat(r->fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= at ||
	    (uint64_t)st.st_size > SIZE_MAX)
		return;
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, r->fd, 0);
	if (p == MAP_FAILED)
		return;
	madvise(p, (size_t)st.st_size, MADV_SEQUENTIAL);
	r->map = p;
	r->map_len = (size_t)st.st_size;
	r->map_skip = (size_t)at;
	r->buf = r->map + r->map_skip;
	r->len = r->cap = r->map_len - r->map_skip;
}

/* Gives back the mapped pages before the frame about to be read, so resident memory stays
 * at a few megabytes however long the file; frames handed out before are dead by now. */
static void
map_release(struct stream_reader *r)
{
	size_t upto = (r->map_skip + r->pos) & ~(size_t)(MAP_RELEASE - 1);
	if (upto > r->released) {
		madvise(r->map + r->released, upto - r->released, MADV_DONTNEED);
		r->released = upto;
	}
}

/* The mapping is used up: its unread tail moves to a buffer, and read() goes on from the
 * end of what was mapped, for a file that grew since.  0, or -1 when out of memory. */
static int
unmap_input(struct stream_reader *r)
{
	size_t rest = r->len - r->pos, cap = READ_CHUNK;
	while (cap < rest)
		cap *= 2;
	uint8_t *nb = malloc(cap);
	if (!nb) {
		seterr(r->err, sizeof(r->err), "out of memory");
		return -1;
	}
	memcpy(nb, r->buf + r->pos, rest);
	if (lseek(r->fd, (off_t)r->map_len, SEEK_SET) < 0) {
		seterr(r->err, sizeof(r->err), "seek error: %s", strerror(errno));
		free(nb);
		return -1;
	}
	munmap(r->map, r->map_len);
	r->map = NULL;
	r->buf = nb;
	r->cap = cap;
	r->len = rest;
	r->pos = 0;
	return 0;
}

/* Makes at least want bytes available from r->pos; 1 ok, 0 clean EOF before any byte,
 * -1 error or EOF in the middle (reported as truncated). */
static int
fill(struct stream_reader *r, size_t want)
{
	if (r->len - r->pos >= want)
		return 1;
	if (r->map && unmap_input(r) < 0)
		return -1;
	if (r->pos > 0) {
		memmove(r->buf, r->buf + r->pos, r->len - r->pos);
		r->len -= r->pos;
		r->pos = 0;
	}
	if (want > r->cap) {
		size_t cap = r->cap ? r->cap : READ_CHUNK;
		while (cap < want)
			cap *= 2;
		uint8_t *nb = realloc(r->buf, cap);
		if (!nb) {
			seterr(r->err, sizeof(r->err), "out of memory");
			return -1;
		}
		r->buf = nb;
		r->cap = cap;
	}
	while (r->len < want) {
		if (r->flush_on_wait && r->flush_on_wait->len &&
		    stream_flush(r->flush_on_wait) < 0) {
			seterr(r->err, sizeof(r->err), "%s", r->flush_on_wait->err);
			return -1;
		}
		ssize_t n = read(r->fd, r->buf + r->len, r->cap - r->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			seterr(r->err, sizeof(r->err), "read error: %s", strerror(errno));
			return -1;
		}
		if (n == 0) {
			r->eof = 1;
			return r->len == 0 ? 0 : -1;
		}
		r->len += (size_t)n;
	}
	return 1;
}

int
stream_reader_status(const struct stream_reader *r)
{
	if (r->flush_on_wait && r->flush_on_wait->errnum == EPIPE)
		return STREAM_EXIT_READER_GONE;
	return r->eof ? STREAM_EXIT_INPUT_ENDED : 1;
}

int
stream_writer_status(const struct stream_writer *w)
{
	return w->errnum == EPIPE ? STREAM_EXIT_READER_GONE : 1;
}

int
stream_reader_open(struct stream_reader *r, int fd, const char *name, struct stream_header *h)
{
	memset(r, 0, sizeof(*r));
	r->fd = fd;
	r->name = name;
	map_input(r);
	int rc = fill(r, STREAM_HEADER_SIZE);
	if (rc <= 0) {
		size_t have = r->len - r->pos < 8 ? r->len - r->pos : 8;
		if (rc < 0 && r->eof && memcmp(r->buf + r->pos, STREAM_MAGIC, have) != 0) {
			/* Short, and no stream at all: not an input that ended early. */
			seterr(r->err, sizeof(r->err), "not a rustprofile stream (bad magic)");
			r->eof = 0;
		} else if (rc == 0 || r->eof) {
			seterr(r->err, sizeof(r->err), rc == 0 ? "empty stream" :
			       "truncated stream header");
		}
		return -1;
	}
	const uint8_t *p = r->buf;
	if (memcmp(p, STREAM_MAGIC, 8) != 0) {
		seterr(r->err, sizeof(r->err), "not a rustprofile stream (bad magic)");
		return -1;
	}
	uint16_t version = ld16(p + 8), hsize = ld16(p + 10);
	if (version != STREAM_VERSION) {
		seterr(r->err, sizeof(r->err), "unsupported stream version %u", version);
		return -1;
	}
	if (ld32(p + 12) != STREAM_BYTE_ORDER) {
		seterr(r->err, sizeof(r->err), "bad byte-order mark");
		return -1;
	}
	if (hsize < STREAM_HEADER_SIZE || hsize > 4096) {
		seterr(r->err, sizeof(r->err), "bad header size %u", hsize);
		return -1;
	}
	h->version = version;
	h->clockid = ld32(p + 16);
	h->e_machine = ld32(p + 20);
	h->clock_offset_ns = (int64_t)ld64(p + 24);
	h->session_id = ld64(p + 32);
	/* A longer header from a newer writer: skip what we do not know. */
	if (fill(r, hsize) <= 0) {
		seterr(r->err, sizeof(r->err), "truncated stream header");
		return -1;
	}
	r->pos = hsize;
	r->offset = hsize;
	return 0;
}

/* stream_read, for any frame: the pages of a mapping are given back, the buffer filled, the
 * frame checked.  Out of line, so that the usual path saves no registers for it. */
__attribute__((noinline)) static int
read_any(struct stream_reader *r, struct frame *f)
{
	if (r->map)
		map_release(r);
	int rc = fill(r, 8);
	if (rc == 0)
		return 0;
	if (rc < 0) {
		if (r->eof)
			seterr(r->err, sizeof(r->err), "truncated frame header at offset %llu",
			       (unsigned long long)r->offset);
		return -1;
	}
	const uint8_t *p = r->buf + r->pos;
	uint32_t type = ld32(p), len = ld32(p + 4);
	if (type == 0) {
		seterr(r->err, sizeof(r->err), "corrupt frame type 0 at offset %llu",
		       (unsigned long long)r->offset);
		return -1;
	}
	if (len > STREAM_MAX_FRAME) {
		seterr(r->err, sizeof(r->err), "frame of %u bytes at offset %llu exceeds the %u "
		       "byte limit", len, (unsigned long long)r->offset, STREAM_MAX_FRAME);
		return -1;
	}
	rc = fill(r, 8 + (size_t)len);
	if (rc <= 0) {
		if (r->eof)
			seterr(r->err, sizeof(r->err), "truncated %s frame at offset %llu",
			       stream_frame_name(type), (unsigned long long)r->offset);
		return -1;
	}
	f->type = type;
	f->len = len;
	f->data = r->buf + r->pos + 8;
	r->pos += 8 + (size_t)len;
	r->offset += 8 + (uint64_t)len;
	if (stream_order_check(&r->order, f, r->err, sizeof(r->err)) < 0)
		return -1;
	r->seen_end |= type == FR_END;
	return 1;
}

int
stream_read(struct stream_reader *r, struct frame *f)
{
	/* The usual frame (a sample, a stack) is whole in the buffer already, sound, of a type
	 * no order rule names (until the end frame, such a frame breaks none), and there are
	 * no pages of a mapping to give back before it: it is taken at once. */
	size_t have = r->len - r->pos;
	if (have >= 8 && !r->order.ended &&
	    (!r->map || ((r->map_skip + r->pos) & ~(size_t)(MAP_RELEASE - 1)) <= r->released)) {
		const uint8_t *p = r->buf + r->pos;
		uint32_t type = ld32(p), len = ld32(p + 4);
		if (type != 0 && type < 64 && !(ORDER_RULED_TYPES >> type & 1) &&
		    len <= STREAM_MAX_FRAME && len <= have - 8) {
			f->type = type;
			f->len = len;
			f->data = p + 8;
			r->pos += 8 + (size_t)len;
			r->offset += 8 + (uint64_t)len;
			return 1;
		}
	}
	return read_any(r, f);
}

void
stream_reader_release(struct stream_reader *r)
{
	if (r->map)
		munmap(r->map, r->map_len);
	else
		free(r->buf);
	r->buf = r->map = NULL;
	stream_order_release(&r->order);
}

/* ---- writing ---- */

static int
write_all(struct stream_writer *w, const uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t k = write(w->fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			w->errnum = errno;
			seterr(w->err, sizeof(w->err), "write error: %s", strerror(errno));
			return -1;
		}
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

int
stream_flush(struct stream_writer *w)
{
	if (w->len == 0 || w->hold)
		return 0;
	int rc = write_all(w, w->buf, w->len);
	w->len = 0;
	return rc;
}

/* Room for n more bytes in a held buffer. */
static int
hold_grow(struct stream_writer *w, size_t n)
{
	size_t cap = w->cap;
	while (cap < w->len + n)
		cap *= 2;
	uint8_t *b = realloc(w->buf, cap);
	if (!b) {
		seterr(w->err, sizeof(w->err), "out of memory");
		return -1;
	}
	w->buf = b;
	w->cap = cap;
	return 0;
}

int
stream_hold(struct stream_writer *w)
{
	if (w->hold)
		return 0;
	int rc = stream_flush(w);
	w->hold = 1;
	return rc;
}

int
stream_unhold(struct stream_writer *w, int (*first)(struct stream_writer *w, void *ctx),
	      void *ctx)
{
	uint8_t *held = w->buf;
	size_t n = w->len;

	w->hold = 0;
	if (!(w->buf = malloc(WRITE_BUF))) {
		w->buf = held;
		seterr(w->err, sizeof(w->err), "out of memory");
		return -1;
	}
	w->cap = WRITE_BUF;
	w->len = 0;
	int rc = first(w, ctx) < 0 || stream_flush(w) < 0 || write_all(w, held, n) < 0 ? -1 : 0;
	free(held);
	return rc;
}

int
stream_writer_open(struct stream_writer *w, int fd, const char *name,
		   const struct stream_header *h)
{
	memset(w, 0, sizeof(*w));
	w->fd = fd;
	w->name = name;
	/* A pipe of 1 MiB (where allowed: pipe-max-size) and 256 KiB writes: a stage then runs
	 * far longer between switches to its neighbours.  Anything else refuses; that is fine. */
	(void)fcntl(fd, F_SETPIPE_SZ, 1 << 20);
	w->cap = WRITE_BUF;
	w->buf = malloc(w->cap);
	if (!w->buf) {
		seterr(w->err, sizeof(w->err), "out of memory");
		return -1;
	}
	uint8_t *p = w->buf;
	memset(p, 0, STREAM_HEADER_SIZE);
	memcpy(p, STREAM_MAGIC, 8);
	st16(p + 8, STREAM_VERSION);
	st16(p + 10, STREAM_HEADER_SIZE);
	st32(p + 12, STREAM_BYTE_ORDER);
	st32(p + 16, h->clockid);
	st32(p + 20, h->e_machine);
	st64(p + 24, (uint64_t)h->clock_offset_ns);
	st64(p + 32, h->session_id);
	w->len = STREAM_HEADER_SIZE;
	/* At once: the stages downstream learn the session (commit's sweep needs its id) even
	 * when this one never gets to write a frame. */
	return stream_flush(w);
}

int
stream_write(struct stream_writer *w, uint32_t type, const void *payload, uint32_t len)
{
	if (len > STREAM_MAX_FRAME) {
		seterr(w->err, sizeof(w->err), "frame of %u bytes exceeds the limit", len);
		return -1;
	}
	uint8_t hdr[8];
	st32(hdr, type);
	st32(hdr + 4, len);
	if (w->len + 8 + len > w->cap && w->hold && hold_grow(w, 8 + (size_t)len) < 0)
		return -1;
	if (w->len + 8 + len > w->cap && stream_flush(w) < 0)
		return -1;
	if (8 + (size_t)len > w->cap) {
		if (write_all(w, hdr, 8) < 0)
			return -1;
		return write_all(w, payload, len);
	}
	memcpy(w->buf + w->len, hdr, 8);
	if (len)
		memcpy(w->buf + w->len + 8, payload, len);
	w->len += 8 + len;
	return 0;
}

uint8_t *
stream_frame_room(struct stream_writer *w, uint32_t type, uint32_t len)
{
	if (8 + (size_t)len > w->cap - w->len)
		return NULL;
	uint8_t *p = w->buf + w->len;
	st32(p, type);
	st32(p + 4, len);
	w->len += 8 + (size_t)len;
	return p + 8;
}

int
stream_forward(struct stream_writer *w, const struct frame *f)
{
	return stream_write(w, f->type, f->data, f->len);
}

void
stream_writer_release(struct stream_writer *w)
{
	free(w->buf);
	free(w->scratch);
	w->buf = w->scratch = NULL;
}

char *
str_dup(struct str s)
{
	char *c = malloc((size_t)s.len + 1);
	if (!c)
		return NULL;
	memcpy(c, s.p, s.len);
	c[s.len] = 0;
	return c;
}

struct str
str_of(const char *s)
{
	return (struct str){ s, (uint16_t)strnlen(s, STREAM_MAX_STR - 1) };
}

int
str_eq(struct str s, const char *c)
{
	size_t n = strlen(c);
	return n == s.len && memcmp(s.p, c, n) == 0;
}

int64_t
stream_unix_ns(uint64_t event_time, int64_t clock_offset_ns)
{
	/* Unsigned arithmetic wraps; the conversion back is two's complement (gcc, clang). */
	return (int64_t)(event_time + (uint64_t)clock_offset_ns);
}
