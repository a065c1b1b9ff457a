/* source: POST /source/v1.  The file is served only when the symbolizer names it for the
 * requested address (as the outer or an inlined frame's file): the request cannot name an
 * arbitrary path (../shared/reference/symbol-api.md, "/source/v1"). */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errbuf.h"
#include "reqparse.h"
#include "symapi.h"
#include "symbolize.h"

#define MAX_INLINE 64

static int
named_at(struct symmod *m, uint32_t offset, const char *file)
{
	struct symframe f[MAX_INLINE];
	uint64_t va;
	int n;

	if (symmod_offset_to_vaddr(m, offset, &va) < 0 ||
	    (n = symmod_lookup(m, va, f, MAX_INLINE)) <= 0)
		return 0;
	for (int i = 0; i < n; i++)
		if (f[i].file && strcmp(f[i].file, file) == 0)
			return 1;
	return 0;
}

/* The file's text, at most SERVE_MAX_RESPONSE / 2 bytes (escaping may double it). */
static char *
read_text(const char *path, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	size_t max = SERVE_MAX_RESPONSE / 2, n = 0;
	struct stat st;
	char *buf = NULL;
	ssize_t r;

	if (fd < 0) {
		errbuf_fail(err, errlen, "cannot open '%s': %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		errbuf_fail(err, errlen, "'%s' is not a regular file", path);
	else if ((uint64_t)st.st_size > max)
		errbuf_fail(err, errlen, "'%s' is larger than %zu bytes", path, max);
	else if (!(buf = malloc((size_t)st.st_size + 1)))
		errbuf_fail(err, errlen, "out of memory");
	while (buf && n < (size_t)st.st_size && (r = read(fd, buf + n, (size_t)st.st_size - n)) > 0)
		n += (size_t)r;
	if (buf)
		buf[n] = 0;
	close(fd);
	return buf;
}

void
symapi_source(struct serve *s, const char *body, size_t len, struct answer *a)
{
	struct sourcereq r;
	struct symmod *m;
	char why[600], *text;

	if (sourcereq_parse(body, len, &r, why, sizeof(why)) < 0) {
		answer_error(a, 400, "source/v1: %s", why);
		return;
	}
	if (!(m = symapi_module(s, r.debug_name, r.debug_id, NULL, why, sizeof(why))))
		answer_error(a, 404, "source/v1: %s", why);
	else if (!named_at(m, r.module_offset, r.file))
		answer_error(a, 403, "source/v1: the debug information does not name '%s' at "
			     "0x%x", r.file, r.module_offset);
	else if (!(text = read_text(r.file, why, sizeof(why))))
		answer_error(a, 404, "source/v1: %s", why);
	else {
		json_t *o = json_pack("{s:n, s:n, s:s, s:s}", "symbolsLastModified",
				      "sourceLastModified", "file", r.file, "source", text);
		free(text);
		if (!o)	/* not UTF-8 */
			answer_error(a, 500, "source/v1: '%s' is not UTF-8 text", r.file);
		else
			answer_json(a, o);
	}
	sourcereq_free(&r);
}
