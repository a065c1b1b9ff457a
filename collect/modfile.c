/*
 * Module cache entries.  Files are written to a temporary name and renamed, so a reader
 * never sees a partial copy, and made 0644 whatever our umask is.  collect runs as root,
 * but what it creates belongs to the owner of the output directory, who can remove it
 * without root; a hard link stays the original's, which that user can still unlink.
 */
#include "modfile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfid.h"
#include "elfslim.h"
#include "modcache.h"

/* path opened read-only when it has build id bid; why says what went wrong otherwise. */
static int
open_checked(const char *path, const uint8_t *bid, size_t len, int *mismatch)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	uint8_t got[20];
	int n = elfid_build_id(fd, got, sizeof(got));
	if (n == (int)len && memcmp(got, bid, len) == 0)
		return fd;
	close(fd);
	*mismatch = 1;
	return -1;
}

int
modfile_open(const struct modcache *m, const uint8_t *bid, size_t len, pid_t pid,
	     uint64_t start, uint64_t end, const char *path, char *err, size_t errlen)
{
	char p[PATH_MAX + 64];
	int fd, mismatch = 0, first_errno;

	/* The mapping itself: right even when the path now names another file. */
	snprintf(p, sizeof(p), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, start, end);
	if ((fd = open_checked(p, bid, len, &mismatch)) >= 0)
		return fd;
	first_errno = errno;
	if (path[0] != '/')
		goto none;
	snprintf(p, sizeof(p), "/proc/%d/root%s", (int)pid, path);
	if ((fd = open_checked(p, bid, len, &mismatch)) >= 0)
		return fd;
	/* A short-lived child may be gone by the time its mmap is read: its files are the
	 * target's, in the same mount namespace as a rule (the build id says whether). */
	if (m->target > 0 && m->target != pid) {
		snprintf(p, sizeof(p), "/proc/%d/root%s", (int)m->target, path);
		if ((fd = open_checked(p, bid, len, &mismatch)) >= 0)
			return fd;
	}
	if (m->shared_ns && (fd = open_checked(path, bid, len, &mismatch)) >= 0)
		return fd;
none:
	if (mismatch)
		snprintf(err, errlen, "'%s' of pid %d no longer has the mapping's build id", path,
			 (int)pid);
	else
		snprintf(err, errlen, "cannot open '%s' of pid %d: %s", path, (int)pid,
			 strerror(first_errno));
	return -1;
}

/* Whether the reduced copy is worth it: at most half of the file. */
static int
reduce(int in, uint64_t *kept)
{
	uint64_t size;
	return elfslim_measure(in, kept, &size) == 0 && *kept * 2 <= size;
}

uint64_t
modfile_estimate(int in)
{
	struct stat st;
	uint64_t kept;
	if (reduce(in, &kept))
		return kept;
	return fstat(in, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* Copies all of in to out with sendfile (copy_file_range fails across file systems). */
static int
copy_fd(int in, int out)
{
	struct stat st;
	if (fstat(in, &st) < 0)
		return -1;
	off_t off = 0;
	while (off < st.st_size) {
		ssize_t n = sendfile(out, in, &off, (size_t)(st.st_size - off));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
	}
	return 0;
}

enum how { HOW_SLIM, HOW_CLONE, HOW_COPY };

/* Writes tmp as a reduced copy, a reflink or a full copy of in, owned by the cache's
 * owner; -1 with errno set. */
static int
write_tmp(const struct modcache *m, int in, const char *tmp, enum how how, char *err,
	  size_t errlen)
{
	int out = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644), rc;
	if (out < 0) {
		snprintf(err, errlen, "cannot create '%s': %s", tmp, strerror(errno));
		return -1;
	}
	if (how == HOW_SLIM)
		rc = elfslim_write(in, out, err, errlen);
	else if (how == HOW_CLONE)
		rc = ioctl(out, FICLONE, in);
	else
		rc = copy_fd(in, out);
	if (rc == 0 && fchmod(out, 0644) < 0)
		rc = -1;
	if (rc == 0 && fchown(out, m->uid, m->gid) < 0 && errno != EPERM)
		rc = -1;
	if (close(out) < 0)
		rc = -1;
	if (rc < 0) {
		if (how != HOW_SLIM || !err[0])
			snprintf(err, errlen, "cannot write '%s': %s", tmp, strerror(errno));
		unlink(tmp);
	}
	return rc;
}

/* A hard link of in at tmp: on DIR's file system, of a plain file the cache's owner may
 * read, never of a set-user-id or set-group-id one (a link would keep an old privileged
 * program alive in the user's directory after an upgrade). */
static int
link_tmp(const struct modcache *m, int in, const char *tmp)
{
	struct stat st;
	char self[64];
	if (fstat(in, &st) < 0 || st.st_dev != m->dev || !S_ISREG(st.st_mode) ||
	    (st.st_mode & (S_ISUID | S_ISGID)) ||
	    !((st.st_mode & S_IROTH) || (st.st_uid == m->uid && (st.st_mode & S_IRUSR))))
		return -1;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", in);
	return linkat(AT_FDCWD, self, AT_FDCWD, tmp, AT_SYMLINK_FOLLOW);
}

int
modfile_store(const struct modcache *m, int in, const char *final, uint64_t *bytes,
	      char *err, size_t errlen)
{
	char tmp[PATH_MAX + 80];
	uint64_t kept, size;
	int rc = -1;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%d", final, (int)getpid()) >= sizeof(tmp)) {
		snprintf(err, errlen, "module cache path too long");
		return -1;
	}
	unlink(tmp);
	err[0] = 0;
	int slim = reduce(in, &kept);
	if (slim)
		rc = write_tmp(m, in, tmp, HOW_SLIM, err, errlen);
	/* Mostly what the stages read anyway (DWARF): sharing the original costs nothing. */
	if (rc < 0)
		rc = write_tmp(m, in, tmp, HOW_CLONE, err, errlen);
	if (rc < 0)
		rc = link_tmp(m, in, tmp);
	if (rc < 0 && !slim)
		rc = elfslim_measure(in, &kept, &size) == 0 ?
			     write_tmp(m, in, tmp, HOW_SLIM, err, errlen) : -1;
	if (rc < 0)
		rc = write_tmp(m, in, tmp, HOW_COPY, err, errlen);
	struct stat st;
	if (rc == 0 && (lstat(tmp, &st) < 0 || rename(tmp, final) < 0)) {
		snprintf(err, errlen, "cannot write '%s': %s", final, strerror(errno));
		unlink(tmp);
		rc = -1;
	}
	if (rc == 0)
		*bytes = (uint64_t)st.st_blocks * 512;
	return rc;
}
