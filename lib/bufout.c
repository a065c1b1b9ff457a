#include "bufout.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void
bufout_init(struct bufout *b, struct tmpfile *t)
{
	b->t = t;
	b->len = 0;
	b->failed = 0;
}

static void
drain(struct bufout *b)
{
	if (!b->failed && b->len && tmpfile_write(b->t, b->buf, b->len) < 0)
		b->failed = 1;
	b->len = 0;
}

void
bufout_put(struct bufout *b, const void *p, size_t n)
{
	if (b->len + n > sizeof(b->buf))
		drain(b);
	if (n > sizeof(b->buf)) {
		if (!b->failed && tmpfile_write(b->t, p, n) < 0)
			b->failed = 1;
		return;
	}
	memcpy(b->buf + b->len, p, n);
	b->len += n;
}

void
bufout_puts(struct bufout *b, const char *s)
{
	bufout_put(b, s, strlen(s));
}

void
bufout_printf(struct bufout *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	/* Formatted pieces are short (numbers, attributes): format straight into the buffer,
	 * draining first when the tail might be too small. */
	if (sizeof(b->buf) - b->len < 1024)
		drain(b);
	va_start(ap, fmt);
	n = vsnprintf(b->buf + b->len, sizeof(b->buf) - b->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(b->buf) - b->len) {
		b->failed = 1;  /* a piece longer than the buffer is a programming error */
		snprintf(b->t->err, sizeof(b->t->err), "formatted output too long");
		return;
	}
	b->len += (size_t)n;
}

int
bufout_flush(struct bufout *b)
{
	drain(b);
	return b->failed ? -1 : 0;
}
