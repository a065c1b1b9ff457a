/*
 * commit: the OTLP export result of a published window (docs/otlp.md).  emit-otlp sends a
 * window's request after the window went on, so its diagnostics are published with
 * otlp.status "pending"; the FR_EXPORT frame that follows once the export has ended makes
 * commit write them again, whole, through a temporary file renamed over them (atomic, as
 * every publication): only the otlp object's status, attempts, rejected_profiles and error
 * change.  A reader sees the old document or the new one, never a mix.
 */
#include "commit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "errbuf.h"
#include "fsutil.h"
#include "json.h"
#include "outname.h"

#define MAX_DIAG (16u << 20)

static const char *const names[] = {
	[1] = "pending", [2] = "exported", [3] = "partial", [4] = "failed", [5] = "dropped",
	[6] = "skipped",
};

const char *
commit_otlp_status(unsigned status)
{
	return status < sizeof(names) / sizeof(names[0]) ? names[status] : NULL;
}

/* The window's diagnostics name when this run still keeps the window, else "" . */
static void
retained_name(const struct commit *c, uint32_t index, char *name, size_t size)
{
	name[0] = '\0';
	if (index >= c->nstarts ||
	    outname_format(name, size, "diagnostics", c->header.session_id, index,
			   commit_unix(c, c->starts[index]), "json") < 0) {
		name[0] = '\0';
		return;
	}
	for (size_t i = 0; i < c->npublished; i++) {
		const struct commit_published *p = &c->published[i];

		if (p->n && !strcmp(p->names[p->n - 1], name))
			return;
	}
	name[0] = '\0';
}

static char *
read_all(struct commit *c, const char *name, size_t *len)
{
	int fd = openat(c->dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	char *buf = NULL;
	size_t cap = 0;
	ssize_t n;

	*len = 0;
	if (fd < 0)
		return NULL;
	do {
		if (*len + 1 >= cap) {   /* room for the NUL too */
			char *b = cap >= MAX_DIAG ? NULL : realloc(buf, cap = cap ? cap * 2 : 65536);
			if (!b) {
				free(buf);
				close(fd);
				return NULL;
			}
			buf = b;
		}
		n = read(fd, buf + *len, cap - *len);
		if (n > 0)
			*len += (size_t)n;
	} while (n > 0 || (n < 0 && errno == EINTR));
	close(fd);
	if (n < 0 || memchr(buf, '\0', *len)) {
		free(buf);
		return NULL;
	}
	buf[*len] = '\0';
	return buf;
}

/* The new first members of the otlp object, as diag.c indents them. */
static int
members(FILE *f, const struct fr_export *x)
{
	const char *status = commit_otlp_status(x->status);
	struct json j;

	fprintf(f, "    \"status\": \"%s\",\n    \"attempts\": %u,\n"
		   "    \"rejected_profiles\": %llu,\n    \"error\": ",
		status ? status : "failed", x->attempts, (unsigned long long)x->rejected);
	json_init(&j, f, 0);
	x->error.len ? json_string_len(&j, x->error.p, x->error.len) : json_nil(&j);
	return j.err[0] ? -1 : 0;
}

/* Writes old (len bytes) with the members between from and to replaced, to a temporary
 * file renamed over name. */
static int
rewrite(struct commit *c, const char *name, const char *old, size_t len, size_t from,
	size_t to, const struct fr_export *x, char *err, size_t errlen)
{
	char temp[300];
	int fd = commit_create_temp(c, name, temp, sizeof(temp));
	FILE *f;
	int rc = 0;

	if (fd < 0)
		return errbuf_fail(err, errlen, "cannot create a file in '%s': %s", c->dir,
				   strerror(errno));
	if (!(f = fdopen(fd, "w"))) {
		close(fd);
		fs_unlink_at(c->dirfd, temp);
		return errbuf_fail(err, errlen, "out of memory");
	}
	fwrite(old, 1, from, f);
	if (members(f, x) < 0)
		rc = -1;
	fwrite(old + to, 1, len - to, f);
	if (fflush(f) != 0 || ferror(f) || fsync(fd) < 0)
		rc = -1;
	if (fclose(f) != 0)
		rc = -1;
	if (rc == 0 && renameat(c->dirfd, temp, c->dirfd, name) < 0)
		rc = -1;
	if (rc < 0) {
		int e = errno;
		fs_unlink_at(c->dirfd, temp);
		return errbuf_fail(err, errlen, "cannot rewrite '%s/%s': %s", c->dir, name,
				   strerror(e));
	}
	if (fsync(c->dirfd) < 0)
		return errbuf_fail(err, errlen, "cannot sync '%s': %s", c->dir, strerror(errno));
	return 0;
}

int
commit_otlp_result(struct commit *c, const struct fr_export *x, char *err, size_t errlen)
{
	static const char open_obj[] = "\n  \"otlp\": {\n", error_key[] = "\n    \"error\": ";
	char name[256];
	size_t len, from, to;
	char *old, *o, *e, *nl;
	int rc;

	retained_name(c, x->index, name, sizeof(name));
	if (!name[0])
		return 0;       /* removed by --keep-windows, or never this run's */
	if (!(old = read_all(c, name, &len)))
		return errbuf_fail(err, errlen, "cannot read '%s/%s': %s", c->dir, name,
				   strerror(errno));
	/* diag.c wrote it: strings never hold a raw newline, so these lines are its own. */
	o = strstr(old, open_obj);
	e = o ? strstr(o, error_key) : NULL;
	nl = e ? strchr(e + 1, '\n') : NULL;
	if (!nl) {
		free(old);
		return errbuf_fail(err, errlen, "'%s/%s' has no otlp object to update", c->dir, name);
	}
	from = (size_t)(o - old) + sizeof(open_obj) - 1;
	to = (size_t)(nl - old) - (nl[-1] == ',');      /* a member may follow the error */
	rc = rewrite(c, name, old, len, from, to, x, err, errlen);
	free(old);
	return rc;
}
