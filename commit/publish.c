/*
 * commit: publishing one window.  Every file is durable under its temp name before any
 * rename; then all are renamed and the directory synced.  A failure anywhere undoes the
 * window: its published names and its temps are removed, so a window is all or nothing.
 */
#include "commit.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "modrefs.h"
#include "outname.h"
#include "errbuf.h"

/*
 * Removes what a failed window left: names [0, nrenamed) of the output order (files, then
 * diagnostics) were renamed, the rest still have temps.  Best effort: the error being
 * reported matters more than a second one.
 */
static void
rollback(struct commit *c, struct commit_batch *b, size_t nrenamed)
{
	for (size_t i = 0; i < b->nfiles; i++)
		fs_unlink_at(c->dirfd, i < nrenamed ? b->files[i].name : b->files[i].temp);
	if (b->diag_temp[0])
		fs_unlink_at(c->dirfd, nrenamed > b->nfiles ? b->diag_name : b->diag_temp);
	fsync(c->dirfd);
}

/* The emitters fsync their files too; doing it here makes the guarantee this stage's.  The
 * file was opened when its frame was accepted (accept.c). */
static int
sync_temp(struct commit *c, const struct commit_file *f, char *err, size_t errlen)
{
	if (fsync(f->fd) < 0)
		return errbuf_fail(err, errlen, "cannot sync '%s/%s': %s", c->dir, f->temp,
			    strerror(errno));
	return 0;
}

/* The name to be renamed is still the file that was checked, not one put in its place. */
static int
same_temp(struct commit *c, const struct commit_file *f, char *err, size_t errlen)
{
	struct stat st;

	if (fstatat(c->dirfd, f->temp, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errbuf_fail(err, errlen, "cannot stat '%s/%s': %s", c->dir, f->temp,
			    strerror(errno));
	if ((uint64_t)st.st_dev != f->dev || (uint64_t)st.st_ino != f->ino)
		return errbuf_fail(err, errlen, "'%s/%s' was replaced before it was published", c->dir,
			    f->temp);
	return 0;
}

/* Creates the diagnostics temporary file as an emitter would (lib/tmpfile.c): ".NAME.tmp-"
 * and six random letters or digits, so that the end-of-run sweep knows it as this
 * session's. */
int
commit_create_temp(struct commit *c, const char *name, char *temp, size_t tlen)
{
	static const char alnum[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	uint8_t r[6];
	int fd = -1;

	for (int tries = 0; tries < 100 && fd < 0; tries++) {
		if (getrandom(r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
			for (int i = 0; i < 6; i++)
				r[i] = (uint8_t)(getpid() + tries * 7 + i * 13);
		snprintf(temp, tlen, ".%s.tmp-%c%c%c%c%c%c", name,
			 alnum[r[0] % 62], alnum[r[1] % 62], alnum[r[2] % 62], alnum[r[3] % 62],
			 alnum[r[4] % 62], alnum[r[5] % 62]);
		fd = openat(c->dirfd, temp,
			    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	return fd;
}

static int
write_diag(struct commit *c, struct commit_batch *b, char *err, size_t errlen)
{
	int fd = commit_create_temp(c, b->diag_name, b->diag_temp, sizeof(b->diag_temp));
	FILE *f;
	int rc;

	if (fd < 0) {
		b->diag_temp[0] = '\0';
		return errbuf_fail(err, errlen, "cannot create a file in '%s': %s", c->dir,
			    strerror(errno));
	}
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		return errbuf_fail(err, errlen, "out of memory");
	}
	rc = commit_diag_write(f, c, b, err, errlen);
	if (rc == 0 && (fflush(f) != 0 || fsync(fd) < 0))
		rc = errbuf_fail(err, errlen, "cannot write '%s/%s': %s", c->dir, b->diag_temp,
			  strerror(errno));
	if (fclose(f) != 0 && rc == 0)
		rc = errbuf_fail(err, errlen, "cannot write '%s/%s': %s", c->dir, b->diag_temp,
			  strerror(errno));
	return rc;
}

static int
rename_all(struct commit *c, struct commit_batch *b, char *err, size_t errlen)
{
	size_t i;

	for (i = 0; i <= b->nfiles; i++) {
		const char *from = i < b->nfiles ? b->files[i].temp : b->diag_temp;
		const char *to = i < b->nfiles ? b->files[i].name : b->diag_name;

		if (i < b->nfiles && same_temp(c, &b->files[i], err, errlen) < 0) {
			rollback(c, b, i);
			return -1;
		}
		if (renameat(c->dirfd, from, c->dirfd, to) < 0) {
			errbuf_fail(err, errlen, "cannot rename '%s/%s' to '%s/%s': %s", c->dir, from,
			     c->dir, to, strerror(errno));
			rollback(c, b, i);
			return -1;
		}
	}
	if (fsync(c->dirfd) < 0) {
		errbuf_fail(err, errlen, "cannot sync '%s': %s", c->dir, strerror(errno));
		rollback(c, b, i);
		return -1;
	}
	return 0;
}

/* Remembers the window's names; past --keep-windows, the oldest window of this invocation
 * goes, every file of it, and nothing this process did not publish. */
static int
retain(struct commit *c, const struct commit_batch *b, char *err, size_t errlen)
{
	struct commit_published *p;

	c->published = commit_xrealloc(c->published, c->npublished + 1, sizeof(*c->published));
	p = &c->published[c->npublished++];
	p->n = 0;
	p->names = commit_xrealloc(NULL, b->nfiles + 1, sizeof(*p->names));
	for (size_t i = 0; i < b->nfiles; i++)
		p->names[p->n++] = commit_xstrdup((struct str){ b->files[i].name,
							       (uint16_t)strlen(b->files[i].name) });
	p->names[p->n++] = commit_xstrdup((struct str){ b->diag_name, (uint16_t)strlen(b->diag_name) });
	if (c->npublished <= c->keep_windows)
		return 0;
	p = &c->published[0];
	for (size_t i = 0; i < p->n; i++)
		if (fs_unlink_at(c->dirfd, p->names[i]) < 0)
			return errbuf_fail(err, errlen, "cannot remove '%s/%s': %s", c->dir, p->names[i],
				    strerror(errno));
	/* The diagnostics file is the window's last name. */
	modrefs_unpublish(c, p->names[p->n - 1]);
	for (size_t i = 0; i < p->n; i++)
		free(p->names[i]);
	free(p->names);
	memmove(p, p + 1, --c->npublished * sizeof(*p));
	if (fsync(c->dirfd) < 0)
		return errbuf_fail(err, errlen, "cannot sync '%s': %s", c->dir, strerror(errno));
	modrefs_prune(c, 0);
	return 0;
}

static int
print_wrote(struct commit *c, const struct commit_batch *b, char *err, size_t errlen)
{
	for (size_t i = 0; i < b->nfiles; i++)
		printf("wrote %s/%s\n", c->dir, b->files[i].name);
	printf("wrote %s/%s\n", c->dir, b->diag_name);
	if (fflush(stdout) != 0 || ferror(stdout))
		return errbuf_fail(err, errlen, "stdout: %s", strerror(errno));
	return 0;
}

int
commit_publish(struct commit *c, struct commit_batch *b, char *err, size_t errlen)
{
	const struct fr_window_end *we = b->end;

	if (outname_format(b->diag_name, sizeof(b->diag_name), "diagnostics",
			   c->header.session_id, we->index, commit_unix(c, we->start), "json") < 0)
		return errbuf_fail(err, errlen, "diagnostics name too long"); /* cannot happen */
	for (size_t i = 0; i < b->nfiles; i++) {
		if (sync_temp(c, &b->files[i], err, errlen) < 0) {
			rollback(c, b, 0);
			return -1;
		}
	}
	if (write_diag(c, b, err, errlen) < 0) {
		rollback(c, b, 0);
		return -1;
	}
	modrefs_publish(c, we->index, b->diag_name);
	if (rename_all(c, b, err, errlen) < 0)
		return -1;
	if (retain(c, b, err, errlen) < 0)
		return -1;
	return print_wrote(c, b, err, errlen);
}
