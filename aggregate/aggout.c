#include "aggout.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

uint16_t
agg_copy_stats(const struct fr_stat *all, size_t n, struct fr_stat *st, uint16_t room)
{
	if (n > room)
		n = room;
	memcpy(st, all, n * sizeof(all[0]));
	return (uint16_t)n;
}

int
agg_warning(struct stream_writer *out, uint64_t time, const char *fmt, ...)
{
	char text[300];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	struct fr_warning w = { time, { text, (uint16_t)(n < (int)sizeof(text) ? n :
						       (int)sizeof(text) - 1) } };
	return stream_put_warning(out, &w);
}
