/*
 * The module cache's bookkeeping: the build ids handled, the session's list, the cap
 * (modfile.c writes the entries).  Directories are 0755 and belong, as every file
 * collect creates, to the owner of the output directory (the cache's parent).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "modcache.h"
#include "modfile.h"

#define RECOUNT_NS 10000000000ull /* a full cache is counted again at most this often */

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

static uint64_t
now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t jit_bytes;

static int
jit_file(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)path;
	(void)ftw;
	if (type == FTW_F && S_ISREG(st->st_mode))
		jit_bytes += (uint64_t)st->st_blocks * 512;
	return 0;
}

/* What DIR/.build-id holds on disk: every entry, a hard link at its whole size (it may be
 * the last name of its file one day); and the JIT symbol files of DIR/.jit (jitcopy.h). */
static uint64_t
count(const struct modcache *m)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/.jit", m->dir);
	jit_bytes = 0;
	(void)nftw(path, jit_file, 8, FTW_PHYS);
	uint64_t sum = jit_bytes;
	snprintf(path, sizeof(path), "%s/.build-id", m->dir);
	DIR *top = opendir(path);
	struct dirent *a, *b;
	while (top && (a = readdir(top))) {
		if (a->d_name[0] == '.')
			continue;
		int fd = openat(dirfd(top), a->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		DIR *sub = fd >= 0 ? fdopendir(fd) : NULL;
		while (sub && (b = readdir(sub))) {
			struct stat st;
			if (b->d_name[0] != '.' &&
			    fstatat(dirfd(sub), b->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
				sum += (uint64_t)st.st_blocks * 512;
		}
		if (sub)
			closedir(sub);
		else if (fd >= 0)
			close(fd);
	}
	if (top)
		closedir(top);
	return sum;
}

/* 1 when collect and pid see the same mount namespace. */
static int
same_ns(pid_t pid)
{
	char path[64];
	struct stat a, b;
	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	return stat("/proc/self/ns/mnt", &a) == 0 && stat(path, &b) == 0 && a.st_ino == b.st_ino &&
	       a.st_dev == b.st_dev;
}

/* DIR/.sessions/SESSION, locked for as long as collect runs (commit's retention tells a
 * running session from an ended one by the lock).  It is locked under a name retention
 * skips, then renamed: it never shows unlocked. */
static int
open_session(const struct modcache *m, uint64_t session_id)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	snprintf(path, sizeof(path), "%s/.sessions", m->dir);
	if (mkdir_0755(m, path) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/.sessions/%016llx", m->dir,
		 (unsigned long long)session_id);
	snprintf(tmp, sizeof(tmp), "%s/.sessions/.%016llx.%d", m->dir,
		 (unsigned long long)session_id, (int)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	if (flock(fd, LOCK_EX) < 0 || (fchown(fd, m->uid, m->gid) < 0 && errno != EPERM) ||
	    rename(tmp, path) < 0) {
		unlink(tmp);
		close(fd);
		return -1;
	}
	return fd;
}

int
modcache_init(struct modcache *m, const char *dir, uint64_t max_bytes, uint64_t session_id,
	      pid_t target)
{
	memset(m, 0, sizeof(*m));
	m->session_fd = -1;
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
	if (stat(dir, &st) < 0 && (mkdir_0755(m, dir) < 0 || stat(dir, &st) < 0))
		return -1;
	m->dev = st.st_dev;
	if (!(m->dir = strdup(dir)))
		return -1;
	m->max_bytes = max_bytes;
	m->bytes = count(m);
	m->target = target;
	m->shared_ns = target > 0 && same_ns(target);
	if ((m->session_fd = open_session(m, session_id)) < 0)
		return -1;
	return 0;
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

/* 1 when an entry of est more bytes fits under the cap, counting again (retention may have
 * freed some) when the last count says no and is old enough. */
static int
fits(struct modcache *m, uint64_t est)
{
	if (m->bytes + est <= m->max_bytes)
		return 1;
	uint64_t now = now_ns();
	if (now < m->recount_at)
		return 0;
	m->recount_at = now + RECOUNT_NS;
	m->bytes = count(m);
	return m->bytes + est <= m->max_bytes;
}

/* Lists bid in the session and makes its directory: final is then its entry's path.  1 when
 * there is nothing to write (handled before, or there), 0 to write it, -1 with err. */
static int
entry_path(struct modcache *m, const uint8_t *bid, size_t len, char *final, size_t finallen,
	   char *err, size_t errlen)
{
	if (!m->dir || len < 2 || modcache_seen(m, bid, len))
		return 1;
	char hex[2 * 20 + 2], dir[PATH_MAX];
	for (size_t i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", bid[i]);
	/* Listed before it is looked for: retention keeps what a running session lists. */
	hex[2 * len] = '\n';
	if (write(m->session_fd, hex, 2 * len + 1) != (ssize_t)(2 * len + 1)) {
		snprintf(err, errlen, "cannot write '%s/.sessions': %s", m->dir, strerror(errno));
		return -1;
	}
	hex[2 * len] = 0;
	snprintf(dir, sizeof(dir), "%s/.build-id", m->dir);
	if (mkdir_0755(m, dir) < 0)
		goto dir_fail;
	snprintf(dir, sizeof(dir), "%s/.build-id/%.2s", m->dir, hex);
	if (mkdir_0755(m, dir) < 0)
		goto dir_fail;
	snprintf(final, finallen, "%s/%s", dir, hex + 2);
	return access(final, F_OK) == 0;
dir_fail:
	snprintf(err, errlen, "cannot create '%s': %s", dir, strerror(errno));
	return -1;
}

/* Writes the entry final for the open file in, unless the cap says no. */
static int
store(struct modcache *m, int in, const char *final, char *err, size_t errlen)
{
	uint64_t bytes = 0;
	int rc;
	if (!fits(m, modfile_estimate(in))) {
		m->not_copied++;
		rc = m->said_full ? 0 : MODCACHE_FULL;
		m->said_full = 1;
	} else if ((rc = modfile_store(m, in, final, &bytes, err, errlen)) == 0) {
		m->bytes += bytes;
	}
	return rc;
}

int
modcache_add(struct modcache *m, const uint8_t *bid, size_t len, pid_t pid,
	     uint64_t start, uint64_t end, const char *path, char *err, size_t errlen)
{
	char final[PATH_MAX + 48];
	int rc = entry_path(m, bid, len, final, sizeof(final), err, errlen);
	if (rc != 0)
		return rc < 0 ? -1 : 0;
	int in = modfile_open(m, bid, len, pid, start, end, path, err, errlen);
	if (in < 0)
		return -1;
	rc = store(m, in, final, err, errlen);
	close(in);
	return rc;
}

int
modcache_add_fd(struct modcache *m, const uint8_t *bid, size_t len, int in, char *err,
		size_t errlen)
{
	char final[PATH_MAX + 48];
	int rc = entry_path(m, bid, len, final, sizeof(final), err, errlen);
	if (rc != 0)
		return rc < 0 ? -1 : 0;
	return store(m, in, final, err, errlen);
}

int
modcache_mkdir(const struct modcache *m, const char *path)
{
	return mkdir_0755(m, path);
}

int
modcache_fits(struct modcache *m, uint64_t bytes)
{
	return fits(m, bytes);
}

void
modcache_free(struct modcache *m)
{
	if (!m)
		return;
	if (m->session_fd >= 0)
		close(m->session_fd);
	free(m->dir);
	free(m->done);
	memset(m, 0, sizeof(*m));
	m->session_fd = -1;
}
