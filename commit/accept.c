/*
 * commit: which file frames it acts on.  A frame only says which of this window's outputs
 * an emitter wrote; the name it is published under is derived here from the session, the
 * window and the kind, and the temporary file must be one an emitter of this run made for
 * it: ".<name>.tmp-XXXXXX" (lib/tmpfile.c) directly in the output directory, a regular file
 * of this uid with no other link, opened without following a symbolic link.  So a frame
 * injected into the stream can neither name a published file nor move or remove a file
 * that is not this run's temporary.
 */
#include "commit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outname.h"
#include "errbuf.h"

/* The kinds the emitters announce, and what they are published as. */
static const struct kind_rule {
	const char *kind, *stage, *prefix;
	const char *ext[2];
	uint32_t flags;
} kinds[] = {
	{ "cpu", "emit-pprof", "cpu", { "pb.gz" }, FILE_REQUIRED },
	{ "off-cpu", "emit-pprof", "off-cpu", { "pb.gz" }, FILE_REQUIRED },
	{ "heap", "emit-pprof", "heap", { "pb.gz" }, FILE_REQUIRED },
	{ "physical-alloc", "emit-pprof", "physical-alloc", { "pb.gz" }, FILE_REQUIRED },
	{ "physical-usage", "emit-pprof", "physical-usage", { "pb.gz" }, FILE_REQUIRED },
	{ "svg-heap", "emit-svg", "heap", { "svg" }, 0 },
	{ "collapsed-heap", "emit-collapsed", "heap", { "collapsed" }, 0 },
	{ "svg-cpu", "emit-svg", "cpu", { "svg" }, 0 },
	{ "svg-off-cpu", "emit-svg", "off-cpu", { "svg" }, 0 },
	{ "collapsed-cpu", "emit-collapsed", "cpu", { "collapsed" }, 0 },
	{ "collapsed-off-cpu", "emit-collapsed", "off-cpu", { "collapsed" }, 0 },
	{ "json-cpu", "emit-json", "cpu", { "json" }, 0 },
	{ "json-off-cpu", "emit-json", "off-cpu", { "json" }, 0 },
	{ "json-heap", "emit-json", "heap", { "json" }, 0 },
	{ "firefox", "emit-firefox", "firefox", { "json.gz", "jslb.gz" }, 0 },
};

#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

void
commit_quote(char *dst, size_t len, struct str s)
{
	size_t n = 0;

	for (uint16_t i = 0; i < s.len && n + 5 < len; i++) {
		unsigned char ch = (unsigned char)s.p[i];

		if (ch >= 0x20 && ch < 0x7f && ch != '\\')
			dst[n++] = (char)ch;
		else
			n += (size_t)snprintf(dst + n, len - n, "\\x%02X", ch);
	}
	if (len)
		dst[n < len ? n : len - 1] = '\0';
}

static const struct kind_rule *
find_kind(struct str kind)
{
	for (size_t i = 0; i < NKINDS; i++)
		if (str_eq(kind, kinds[i].kind))
			return &kinds[i];
	return NULL;
}

/* 1 when temp is "." + name + ".tmp-" + six letters or digits, the emitters' pattern. */
int
commit_temp_of(const char *temp, size_t tlen, const char *name)
{
	size_t n = strlen(name);

	if (tlen != 1 + n + 5 + 6 || temp[0] != '.' || memcmp(temp + 1, name, n) != 0 ||
	    memcmp(temp + 1 + n, ".tmp-", 5) != 0)
		return 0;
	for (size_t i = 1 + n + 5; i < tlen; i++) {
		char ch = temp[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9')))
			return 0;
	}
	return 1;
}

/* Opens temp in the output directory if it is this run's temporary file: 0 and *fd, st, or
 * -1 with err (ENOENT in *gone when it does not exist). */
static int
open_temp(struct commit *c, const char *temp, int *fd, struct stat *st, int *gone, char *err,
	  size_t errlen)
{
	char q[600];

	*gone = 0;
	commit_quote(q, sizeof(q), (struct str){ temp, (uint16_t)strlen(temp) });
	*fd = openat(c->dirfd, temp, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (*fd < 0) {
		*gone = errno == ENOENT;
		return errbuf_fail(err, errlen, "cannot open '%s/%s': %s", c->dir, q,
			    errno == ELOOP ? "it is a symbolic link" : strerror(errno));
	}
	if (fstat(*fd, st) < 0) {
		errbuf_fail(err, errlen, "cannot stat '%s/%s': %s", c->dir, q, strerror(errno));
	} else if (!S_ISREG(st->st_mode) || st->st_uid != geteuid() || st->st_nlink != 1) {
		errbuf_fail(err, errlen, "'%s/%s' is not a temporary file of this run: %s", c->dir, q,
		     !S_ISREG(st->st_mode) ? "not a regular file" :
		     st->st_uid != geteuid() ? "another user's file" : "it has other links");
	} else {
		return 0;
	}
	close(*fd);
	*fd = -1;
	return -1;
}

/*
 * The final name of f in window index (starting at start, event time), into name: -1 with
 * err when the frame's kind, flags, name or temporary do not match what an emitter
 * announces for this window.
 */
static int
derive(const struct commit *c, const struct fr_file *f, uint64_t start, char *name,
       size_t len, char *err, size_t errlen)
{
	const struct kind_rule *k = find_kind(f->kind);
	char want[256], qk[200], qn[600], qt[600];
	int ok = 0;

	commit_quote(qk, sizeof(qk), f->kind);
	commit_quote(qn, sizeof(qn), f->name);
	commit_quote(qt, sizeof(qt), f->temp);
	if (!k)
		return errbuf_fail(err, errlen, "file frame for window %u: kind '%s' is not one an "
			    "emitter announces", f->index, qk);
	if ((f->flags & ~(uint32_t)FILE_DISCARD) != k->flags)
		return errbuf_fail(err, errlen, "file frame for window %u: flags %u are not those of a "
			    "%s file of %s", f->index, f->flags, k->kind, k->stage);
	for (int i = 0; i < 2 && k->ext[i] && !ok; i++) {
		if (outname_format(want, sizeof(want), k->prefix, c->header.session_id, f->index,
				   commit_unix(c, start), k->ext[i]) < 0)
			return errbuf_fail(err, errlen, "file name too long"); /* cannot happen */
		ok = str_eq(f->name, want);
	}
	if (!ok)
		return errbuf_fail(err, errlen, "file frame for window %u: name '%s' is not the %s file "
			    "of this window ('%s')", f->index, qn, k->kind, want);
	if (!commit_temp_of(f->temp.p, f->temp.len, want))
		return errbuf_fail(err, errlen, "file frame for window %u: '%s' is not a temporary file "
			    "of '%s'", f->index, qt, want);
	snprintf(name, len, "%s", want);
	return 0;
}

int
commit_accept_file(struct commit *c, const struct fr_file *f, uint64_t start,
		   struct commit_file *out, char *err, size_t errlen)
{
	char name[256];
	struct stat st;
	int fd, gone;

	if (derive(c, f, start, name, sizeof(name), err, errlen) < 0)
		return -1;
	*out = (struct commit_file){ .index = f->index, .flags = f->flags, .fd = -1 };
	out->kind = commit_xstrdup(f->kind);
	out->name = commit_xstrdup((struct str){ name, (uint16_t)strlen(name) });
	out->temp = commit_xstrdup(f->temp);
	if (open_temp(c, out->temp, &fd, &st, &gone, err, errlen) < 0) {
		commit_file_release(out);
		return -1;
	}
	out->fd = fd;
	out->dev = st.st_dev;
	out->ino = st.st_ino;
	return 0;
}

int
commit_discard_file(struct commit *c, const struct fr_file *f, char *err, size_t errlen)
{
	char name[256];
	char *temp;
	struct stat st;
	int fd, gone, rc = 0;

	if (f->index >= c->nstarts)
		return errbuf_fail(err, errlen, "file frame for window %u: discarded before its window "
			    "ended", f->index);
	if (derive(c, f, c->starts[f->index], name, sizeof(name), err, errlen) < 0)
		return -1;
	temp = commit_xstrdup(f->temp);
	if (open_temp(c, temp, &fd, &st, &gone, err, errlen) < 0) {
		/* Already gone: nothing to remove, and nothing published depends on it. */
		rc = gone ? 0 : -1;
	} else {
		close(fd);
		if (unlinkat(c->dirfd, temp, 0) < 0 && errno != ENOENT)
			fprintf(stderr, "commit: cannot remove '%s/%s': %s\n", c->dir, temp,
				strerror(errno));
	}
	free(temp);
	return rc;
}
