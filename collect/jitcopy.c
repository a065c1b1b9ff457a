/* JIT symbol files into the module cache (see jitcopy.h). */
#include "jitcopy.h"

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"
#include "emit.h"
#include "grow.h"
#include "modcache.h"
#include "procfs.h"

#define COPY_CHUNK (1u << 20)

void
jitcopy_init(struct jitcopy *j, struct modcache *cache, struct emit *out, uint64_t session_id)
{
	memset(j, 0, sizeof(*j));
	j->cache = cache;
	j->out = out;
	if (cache->dir)
		snprintf(j->dir, sizeof(j->dir), "%s/.jit/%016llx", cache->dir,
			 (unsigned long long)session_id);
}

void
jitcopy_free(struct jitcopy *j)
{
	free(j->v);
	j->v = NULL;
	j->n = j->cap = 0;
}

static struct jitwatch *
watch(struct jitcopy *j, pid_t pid)
{
	for (size_t i = 0; i < j->n; i++)
		if (j->v[i].pid == pid)
			return &j->v[i];
	char path[64];
	struct stat st;
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (j->n >= JITCOPY_MAX_PROCS || stat(path, &st) < 0 ||
	    grow_array((void **)&j->v, &j->cap, j->n, 1, sizeof(*j->v)) < 0)
		return NULL;
	struct jitwatch *w = &j->v[j->n++];
	memset(w, 0, sizeof(*w));
	w->pid = pid;
	w->nspid = procfs_ns_pid(pid);
	w->uid = st.st_uid; /* the process's effective user (root when it is not dumpable) */
	j->fresh = 1;
	return w;
}

static int
anonymous(const char *path)
{
	return !path[0] || strcmp(path, "//anon") == 0 || strncmp(path, "[anon", 5) == 0 ||
	       strncmp(path, "/memfd:", 7) == 0;
}

/* "jit-N.dump" as the last component: what perf looks for among the mappings. */
static int
jitdump_name(const char *path)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	size_t n = strlen(b);
	if (path[0] != '/' || n < 10 || strncmp(b, "jit-", 4) != 0 ||
	    strcmp(b + n - 5, ".dump") != 0)
		return 0;
	for (size_t i = 4; i < n - 5; i++)
		if (b[i] < '0' || b[i] > '9')
			return 0;
	return 1;
}

void
jitcopy_mapping(struct jitcopy *j, const struct fr_mmap *m, const char *path)
{
	if (!j->dir[0] || !m->pid)
		return;
	int dump = jitdump_name(path);
	if (!dump && !anonymous(path))
		return;
	struct jitwatch *w = watch(j, (pid_t)m->pid);
	if (w && dump && strcmp(w->dump, path) != 0) {
		snprintf(w->dump, sizeof(w->dump), "%s", path);
		w->jd = (struct jitsrc){ 0 };
		j->fresh = 1;
	}
}

/* rel (no leading '/') inside the root directory rootfd, following no symbolic link and
 * never leaving it (openat2); before Linux 5.6, the last component only is kept from
 * being a link. */
static int
open_in_root(int rootfd, const char *rel)
{
	struct open_how how = { .flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK,
				.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS |
					   RESOLVE_NO_MAGICLINKS };
	long fd = syscall(SYS_openat2, rootfd, rel, &how, sizeof(how));
	if (fd < 0 && errno == ENOSYS)
		fd = openat(rootfd, rel, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);
	return (int)fd;
}

/* The process's file path (absolute, in its mount namespace): through its root, else the
 * target's (the process may be gone, its files stay), else collect's own when it shares
 * the target's namespace.  Only a regular file with one link owned by the process's user. */
static int
open_source(const struct jitcopy *j, const struct jitwatch *w, const char *path, struct stat *st)
{
	pid_t roots[2] = { w->pid, j->cache->target };
	char root[64];
	for (int i = 0; i < 3; i++) {
		int rfd;
		if (i < 2) {
			if (roots[i] <= 0)
				continue;
			snprintf(root, sizeof(root), "/proc/%d/root", (int)roots[i]);
			rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
		} else {
			rfd = j->cache->shared_ns ? open("/", O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
		}
		if (rfd < 0)
			continue;
		int fd = open_in_root(rfd, path + 1);
		close(rfd);
		if (fd < 0)
			continue;
		if (fstat(fd, st) == 0 && S_ISREG(st->st_mode) && st->st_nlink == 1 &&
		    st->st_uid == w->uid)
			return fd;
		close(fd);
		return -1; /* there, but not one to copy */
	}
	return -1;
}

static void
say_full(struct jitcopy *j, uint64_t now)
{
	char why[PATH_MAX + 200];
	if (j->said_full)
		return;
	j->said_full = 1;
	snprintf(why, sizeof(why), "module cache full: '%s' holds %llu bytes, "
		 "--max-module-cache %llu; JIT symbol files are not copied further",
		 j->cache->dir, (unsigned long long)j->cache->bytes,
		 (unsigned long long)j->cache->max_bytes);
	warnx("%s", why);
	struct fr_warning fw = { now, str_of(why) };
	emit_warning(j->out, &fw);
}

/* DIR/.jit/SESSION/PID into dst, made as the cache's directories are. */
static int
make_dirs(const struct jitcopy *j, const struct jitwatch *w, char *dst, size_t len)
{
	snprintf(dst, len, "%s/.jit", j->cache->dir);
	if (modcache_mkdir(j->cache, dst) < 0 || modcache_mkdir(j->cache, j->dir) < 0)
		return -1;
	snprintf(dst, len, "%s/%d", j->dir, (int)w->pid);
	return modcache_mkdir(j->cache, dst);
}

/* Appends what src gained to the copy name of w. */
static void
copy_on(struct jitcopy *j, struct jitwatch *w, struct jitsrc *s, const char *src,
	const char *name, uint64_t now)
{
	struct stat st;
	char dst[PATH_MAX + 64];
	if (s->stopped)
		return;
	int in = open_source(j, w, src, &st);
	if (in < 0)
		return;
	if ((uint64_t)st.st_size < s->copied)
		s->stopped = 1; /* not the file copied so far */
	uint64_t more = s->stopped ? 0 : (uint64_t)st.st_size - s->copied;
	if (more && !modcache_fits(j->cache, more)) {
		say_full(j, now);
		more = 0;
	}
	int out = -1;
	if (more && make_dirs(j, w, dst, sizeof(dst)) == 0) {
		snprintf(dst + strlen(dst), sizeof(dst) - strlen(dst), "/%s", name);
		out = open(dst, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
		if (out >= 0 && s->copied == 0 &&
		    fchown(out, j->cache->uid, j->cache->gid) < 0 && errno != EPERM)
			warn("module cache: '%s'", dst);
	}
	static char buf[COPY_CHUNK];
	while (out >= 0 && more) {
		ssize_t n = pread(in, buf, more < sizeof(buf) ? more : sizeof(buf),
				  (off_t)s->copied);
		if (n <= 0 || write(out, buf, (size_t)n) != n)
			break;
		s->copied += (uint64_t)n;
		j->cache->bytes += (uint64_t)n;
		more -= (uint64_t)n;
	}
	if (out >= 0)
		close(out);
	close(in);
}

void
jitcopy_sync(struct jitcopy *j, uint64_t now, int force)
{
	if (!j->n || (!force && now < j->next_ns))
		return;
	j->next_ns = now + JITCOPY_EVERY_NS;
	j->fresh = 0;
	for (size_t i = 0; i < j->n; i++) {
		struct jitwatch *w = &j->v[i];
		char map[64];
		snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)w->nspid);
		copy_on(j, w, &w->map, map, "perf.map", now);
		if (w->dump[0])
			copy_on(j, w, &w->jd, w->dump, "jit.dump", now);
	}
}

void
jitcopy_before_sample(struct jitcopy *j)
{
	if (j->fresh)
		jitcopy_sync(j, collect_now(), 1);
}
