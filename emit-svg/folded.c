#include "folded.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint8_t
frame_kind(const char *s, uint32_t *len, size_t i)
{
	if (*len >= 4 && s[*len - 4] == '_' && s[*len - 3] == '[' && s[*len - 1] == ']') {
		char k = s[*len - 2];

		if (k == 'k' || k == 'j' || k == 'i') {
			*len -= 4;
			return k == 'k' ? WF_KERNEL : WF_USER;
		}
	}
	if (i == 0)
		return WF_ROOT;
	if (*len >= 2 && s[0] == '[' && s[*len - 1] == ']')
		return WF_UNSYMBOLIZED;
	return WF_USER;
}

/* Splits line[0..len) into frames and its count; 0 when it is not a folded line. */
static int
parse_line(char *line, size_t len, struct wframe *fr, size_t *n, uint64_t *count)
{
	char *sp = memrchr(line, ' ', len), *end, *p, *semi;

	if (!sp || sp == line || sp[1] < '0' || sp[1] > '9')
		return 0;
	errno = 0;
	*count = strtoull(sp + 1, &end, 10);
	if (errno || end != line + len)
		return 0;
	*n = 0;
	for (p = line; p < sp && *n < WINMODEL_MAX_FRAMES; p = semi + 1) {
		if (!(semi = memchr(p, ';', (size_t)(sp - p))))
			semi = sp;
		fr[*n].name = p;
		fr[*n].len = (uint32_t)(semi - p);
		fr[*n].kind = frame_kind(p, &fr[*n].len, *n);
		(*n)++;
	}
	return 1;
}

int
folded_read(FILE *f, struct flame *t, struct wframe *frames, struct folded_stats *st)
{
	char *line = NULL;
	size_t cap = 0, n;
	ssize_t len;
	uint64_t count;

	t->err[0] = 0;
	errno = 0;
	while ((len = getline(&line, &cap, f)) >= 0) {
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			len--;
		st->lines++;
		if (!parse_line(line, (size_t)len, frames, &n, &count)) {
			st->ignored++;
			continue;
		}
		if (flame_add(t, frames, n, count) < 0) {
			free(line);
			return -1;
		}
		t->samples += count;
	}
	free(line);
	return ferror(f) ? -1 : 0;
}
