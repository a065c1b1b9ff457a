/*
 * Module cache writer.  Files are written to a temporary name and renamed, so a reader
 * never sees a partial copy, and made 0644 in 0755 directories whatever our umask is.
 * collect runs as root, but what it creates belongs to the owner of the output directory
 * (the cache's parent): the user whose profiles these are can remove them without root.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfid.h"
#include "modcache.h"
#include "procfs.h"

static int
mkdir_0755(const struct modcache *m, const char *path)
{
	if (mkdir(path, 0755) < 0) {
		if (errno != EEXIST)
			return -1;
		return 0;
	}
	if (chmod(path, 0755) < 0 && errno != EPERM)
		return -1;
	/* Not ours to give away (not root): it stays ours, which is as good. */
	if (chown(path, m->uid, m->gid) < 0 && errno != EPERM)
		return -1;
	return 0;
}

int
modcache_init(struct modcache *m, const char *dir)
{
	memset(m, 0, sizeof(*m));
	if (!dir)
		return 0;
	struct stat st;
	char parent[PATH_MAX];
	snprintf(parent, sizeof(parent), "%s", dir);
	char *slash = strrchr(parent, '/');
	if (!slash)
		snprintf(parent, sizeof(parent), ".");
	else if (slash == parent)
		parent[1] = 0;
	else
		*slash = 0;
	if (stat(parent, &st) < 0)
		return -1;
	m->uid = st.st_uid;
	m->gid = st.st_gid;
	if (stat(dir, &st) < 0 && mkdir_0755(m, dir) < 0)
		return -1;
	m->dir = strdup(dir);
	return m->dir ? 0 : -1;
}

/* Records bid as handled; 1 when it already was. */
static int
modcache_seen(struct modcache *m, const uint8_t *bid, size_t len)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->done[i][0] == len && memcmp(m->done[i] + 1, bid, len) == 0)
			return 1;
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64;
		void *v = realloc(m->done, cap * sizeof(*m->done));
		if (!v)
			return 0;
		m->done = v;
		m->cap = cap;
	}
	m->done[m->n][0] = (uint8_t)len;
	memcpy(m->done[m->n++] + 1, bid, len);
	return 0;
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

static int
modcache_copy(const struct modcache *m, int in, const char *final, char *err, size_t errlen)
{
	char tmp[PATH_MAX + 80];
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%d", final, (int)getpid()) >= sizeof(tmp)) {
		snprintf(err, errlen, "module cache path too long");
		return -1;
	}
	int out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0) {
		snprintf(err, errlen, "cannot create '%s': %s", tmp, strerror(errno));
		return -1;
	}
	int rc = copy_fd(in, out);
	if (rc == 0)
		rc = fchmod(out, 0644);
	if (rc == 0 && fchown(out, m->uid, m->gid) < 0 && errno != EPERM)
		rc = -1;
	if (close(out) < 0)
		rc = -1;
	if (rc == 0)
		rc = rename(tmp, final);
	if (rc < 0) {
		snprintf(err, errlen, "cannot write '%s': %s", final, strerror(errno));
		unlink(tmp);
	}
	return rc;
}

int
modcache_add(struct modcache *m, const uint8_t *bid, size_t len, pid_t pid,
	     uint64_t start, uint64_t end, const char *path, char *err, size_t errlen)
{
	if (!m->dir || len < 2 || modcache_seen(m, bid, len))
		return 0;
	char hex[2 * 20 + 1], dir[PATH_MAX], final[PATH_MAX + 48];
	for (size_t i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", bid[i]);
	snprintf(dir, sizeof(dir), "%s/.build-id", m->dir);
	if (mkdir_0755(m, dir) < 0)
		goto dir_fail;
	snprintf(dir, sizeof(dir), "%s/.build-id/%.2s", m->dir, hex);
	if (mkdir_0755(m, dir) < 0)
		goto dir_fail;
	snprintf(final, sizeof(final), "%s/%s", dir, hex + 2);
	if (access(final, F_OK) == 0)
		return 0;
	int in = procfs_open_mapping(pid, start, end, path);
	if (in < 0) {
		snprintf(err, errlen, "cannot open '%s' of pid %d: %s", path, (int)pid,
			 strerror(errno));
		return -1;
	}
	/* The path may now name a newer file; never file it under the wrong id. */
	uint8_t got[20];
	int gl = elfid_build_id(in, got, sizeof(got));
	int rc = -1;
	if (gl != (int)len || memcmp(got, bid, len) != 0)
		snprintf(err, errlen, "'%s' of pid %d no longer has build id %s", path, (int)pid,
			 hex);
	else
		rc = modcache_copy(m, in, final, err, errlen);
	close(in);
	return rc;
dir_fail:
	snprintf(err, errlen, "cannot create '%s': %s", dir, strerror(errno));
	return -1;
}

void
modcache_free(struct modcache *m)
{
	if (!m)
		return;
	free(m->dir);
	free(m->done);
	memset(m, 0, sizeof(*m));
}
