#include "tmpfile.h"
#include "fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TMP_SUFFIX ".tmp-XXXXXX"

/* mkostemp creates 0600; published profiles should get the permissions a normal create
 * would give, so read the umask (set and restore: there is no getter). */
static mode_t
create_mode(void)
{
	mode_t mask = umask(022);

	umask(mask);
	return 0666 & ~mask;
}

int
tmpfile_create(struct tmpfile *t, const char *dir, const char *final_name)
{
	size_t dlen = strlen(dir), n;

	t->fd = -1;
	t->created = 0;
	t->err[0] = 0;
	n = dlen + 2 + strlen(final_name) + sizeof(TMP_SUFFIX);
	if (!(t->path = malloc(n))) {
		snprintf(t->err, sizeof(t->err), "out of memory");
		return -1;
	}
	snprintf(t->path, n, "%s/.%s" TMP_SUFFIX, dir, final_name);
	t->name = t->path + dlen + 1;
	t->fd = mkostemp(t->path, O_CLOEXEC);
	t->created = t->fd >= 0;
	if (t->fd < 0 || fchmod(t->fd, create_mode()) < 0) {
		snprintf(t->err, sizeof(t->err), "cannot create '%s': %s", t->path,
			 strerror(errno));
		tmpfile_discard(t);
		return -1;
	}
	return 0;
}

int
tmpfile_write(struct tmpfile *t, const void *p, size_t n)
{
	if (fs_write_all(t->fd, p, n) < 0) {
		snprintf(t->err, sizeof(t->err), "cannot write '%s': %s", t->path,
			 strerror(errno));
		return -1;
	}
	return 0;
}

int
tmpfile_finish(struct tmpfile *t)
{
	int rc = 0;

	if (fsync(t->fd) < 0) {
		snprintf(t->err, sizeof(t->err), "cannot sync '%s': %s", t->path, strerror(errno));
		rc = -1;
	}
	/* close can report a delayed write error (NFS); count it as a failure too. */
	if (close(t->fd) < 0 && rc == 0) {
		snprintf(t->err, sizeof(t->err), "cannot close '%s': %s", t->path, strerror(errno));
		rc = -1;
	}
	t->fd = -1;
	return rc;
}

void
tmpfile_discard(struct tmpfile *t)
{
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
	if (t->created && t->path)
		unlink(t->path);
	t->created = 0;
	tmpfile_release(t);
}

void
tmpfile_release(struct tmpfile *t)
{
	free(t->path);
	t->path = NULL;
	t->name = NULL;
}
