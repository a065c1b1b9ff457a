/*
 * cgroup v2 plumbing for launch.  The name carries the session id and the command's pid, so
 * two recordings never share a cgroup and a leftover one says where it came from.  At the
 * end, the processes still inside (a background child the command left running, or the
 * command itself when the recording stopped first) go back to the cgroup collect was in
 * when it made the launch cgroup, where the command came from, and keep running there; the
 * launch cgroup is then removed.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "cgroup.h"
#include "errbuf.h"
#include "outname.h"

#define REMOVE_TRIES 200        /* x 10 ms: a task that exited leaves its cgroup late */
#define EXIT_TRIES 20           /* the same when collect dies on an error */

/* The cgroup to remove should collect die on an error after creating it. */
static struct launch_cgroup *live;

static void
remove_at_exit(void)
{
	char why[PATH_MAX + 200];
	size_t moved;

	/* Best effort: what fails is left as it is. */
	if (live && live->path[0])
		cgroup_empty_remove(live, EXIT_TRIES, &moved, why, sizeof(why));
}

static int
is_cgroup2(const char *dir, char *err, size_t errlen)
{
	struct statfs fs;
	if (statfs(dir, &fs) < 0) {
		snprintf(err, errlen, "cgroup parent '%s': %s", dir, strerror(errno));
		return -1;
	}
	if (fs.f_type != CGROUP2_SUPER_MAGIC) {
		snprintf(err, errlen, "'%s' is not in a cgroup v2 hierarchy", dir);
		return -1;
	}
	return 0;
}

/* Undoes mountinfo's octal escapes (\040 for a space) in place. */
static void
unescape(char *s)
{
	char *w = s;
	for (char *r = s; *r; r++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
		    r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
			r += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = 0;
}

/* "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [TAGS...] - FSTYPE SOURCE SUPEROPTS": the mount
 * point of the cgroup v2 hierarchy, and (root not NULL) the cgroup it shows as its root. */
int
cgroup_mount_point(char *buf, size_t len, char *root, size_t rootlen)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[8192];
	int found = 0;
	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		char *sep = strstr(line, " - ");
		char mnt[4096], top[4096];
		if (!sep || strncmp(sep + 3, "cgroup2 ", 8) != 0)
			continue;
		if (sscanf(line, "%*s %*s %*s %4095s %4095s", top, mnt) != 2)
			continue;
		unescape(mnt);
		unescape(top);
		found = snprintf(buf, len, "%s", mnt) < (int)len &&
			(!root || snprintf(root, rootlen, "%s", top) < (int)rootlen);
	}
	fclose(f);
	return found;
}

/* The directory of the cgroup v2 of pid (0: collect's own): the 0:: line of
 * /proc/PID/cgroup, a path from the hierarchy's root, under the mount point.  0, or -1 when
 * it cannot be told. */
int
cgroup_of_task(pid_t pid, char *buf, size_t len)
{
	char mnt[PATH_MAX], root[PATH_MAX], line[PATH_MAX + 8], file[40];
	const char *rel = NULL;
	if (pid > 0)
		snprintf(file, sizeof(file), "/proc/%d/cgroup", (int)pid);
	else
		snprintf(file, sizeof(file), "/proc/self/cgroup");
	FILE *f = fopen(file, "re");

	if (!f)
		return -1;
	while (!rel && fgets(line, sizeof(line), f))
		if (strncmp(line, "0::/", 4) == 0)
			rel = line + 3;
	fclose(f);
	if (!rel || !cgroup_mount_point(mnt, sizeof(mnt), root, sizeof(root)))
		return -1;
	line[strcspn(line, "\n")] = 0;
	/* A mount of a sub-tree (a cgroup namespace's) shows the paths below its root. */
	size_t n = strlen(root);
	if (strcmp(root, "/") != 0) {
		if (strncmp(rel, root, n) != 0 || (rel[n] && rel[n] != '/'))
			return -1;
		rel += n;
	}
	if (strcmp(rel, "/") == 0)
		rel = "";
	return snprintf(buf, len, "%s%s", mnt, rel) < (int)len ? 0 : -1;
}

int
cgroup_parent(char *buf, size_t len, char *err, size_t errlen)
{
	const char *env = getenv(CGROUP_PARENT_ENV);
	if (env && *env) {
		if (snprintf(buf, len, "%s", env) >= (int)len) {
			snprintf(err, errlen, "%s is too long", CGROUP_PARENT_ENV);
			return -1;
		}
	} else if (!cgroup_mount_point(buf, len, NULL, 0)) {
		snprintf(err, errlen, "no cgroup v2 hierarchy is mounted");
		return -1;
	}
	return is_cgroup2(buf, err, errlen);
}

static int
write_pid(const char *dir, pid_t pid)
{
	char path[PATH_MAX + 16], text[32];
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int n = snprintf(text, sizeof(text), "%d\n", (int)pid);
	ssize_t w = write(fd, text, (size_t)n);
	int saved = errno;
	close(fd);
	errno = saved;
	return w == n ? 0 : -1;
}

int
cgroup_create(struct launch_cgroup *g, uint64_t session_id, pid_t pid, char *err,
	      size_t errlen)
{
	char parent[PATH_MAX], session[17];
	struct stat st;

	g->path[0] = 0;
	g->fd = -1;
	g->id = 0;
	if (cgroup_parent(parent, sizeof(parent), err, errlen) < 0)
		return -1;
	/* Where the command was started from, for what it leaves running at the end. */
	if (cgroup_of_task(0, g->origin, sizeof(g->origin)) < 0)
		g->origin[0] = 0;
	outname_session(session, session_id);
	if (snprintf(g->path, sizeof(g->path), "%s/rustprofile-%s-%d", parent, session,
		     (int)pid) >= (int)sizeof(g->path)) {
		g->path[0] = 0;
		snprintf(err, errlen, "cgroup parent '%s' is too long", parent);
		return -1;
	}
	if (mkdir(g->path, 0755) < 0) {
		snprintf(err, errlen, "cannot create cgroup '%s': %s", g->path, strerror(errno));
		g->path[0] = 0;
		return -1;
	}
	g->fd = open(g->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (g->fd < 0 || fstat(g->fd, &st) < 0 || write_pid(g->path, pid) < 0) {
		snprintf(err, errlen, "cannot move pid %d into cgroup '%s': %s", (int)pid,
			 g->path, strerror(errno));
		if (g->fd >= 0)
			close(g->fd);
		rmdir(g->path);
		g->path[0] = 0;
		g->fd = -1;
		return -1;
	}
	g->id = (uint64_t)st.st_ino;
	if (!live)
		atexit(remove_at_exit);
	live = g;
	return 0;
}

int
cgroup_adopt(struct launch_cgroup *g, const char *path, char *err, size_t errlen)
{
	struct stat st;

	g->origin[0] = 0;
	g->fd = -1;
	if (snprintf(g->path, sizeof(g->path), "%s", path) >= (int)sizeof(g->path)) {
		g->path[0] = 0;
		return errbuf_fail(err, errlen, "cgroup path '%s' is too long", path);
	}
	g->fd = open(g->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (g->fd < 0 || fstat(g->fd, &st) < 0) {
		errbuf_fail(err, errlen, "cannot open cgroup '%s': %s", g->path, strerror(errno));
		if (g->fd >= 0)
			close(g->fd);
		g->fd = -1;
		g->path[0] = 0;
		return -1;
	}
	if (is_cgroup2(g->path, err, errlen) < 0) {
		close(g->fd);
		g->fd = -1;
		g->path[0] = 0;
		return -1;
	}
	g->id = (uint64_t)st.st_ino;
	return 0;
}

void
cgroup_release(struct launch_cgroup *g)
{
	if (g->fd >= 0)
		close(g->fd);
	g->fd = -1;
	g->path[0] = 0;
	g->id = 0;
}

int
cgroup_holds(const struct launch_cgroup *g, pid_t pid)
{
	char dir[PATH_MAX];
	size_t n = strlen(g->path);
	if (!n || cgroup_of_task(pid, dir, sizeof(dir)) < 0)
		return 0;
	/* The cgroup itself, or one its tasks made below it. */
	return strncmp(dir, g->path, n) == 0 && (dir[n] == 0 || dir[n] == '/');
}

int
cgroup_procs(const struct launch_cgroup *g, pid_t **out, size_t *n)
{
	char path[PATH_MAX + 16];
	size_t cap = 0;
	long v;

	*out = NULL;
	*n = 0;
	snprintf(path, sizeof(path), "%s/cgroup.procs", g->path);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	while (fscanf(f, "%ld", &v) == 1) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			pid_t *p = realloc(*out, cap * sizeof(**out));
			if (!p) {
				fclose(f);
				errno = ENOMEM;
				return -1;
			}
			*out = p;
		}
		(*out)[(*n)++] = (pid_t)v;
	}
	fclose(f);
	return 0;
}

/* Moves every process in g to its origin: how many moved, or -1 with err. */
static int
move_back(struct launch_cgroup *g, size_t *moved, char *err, size_t errlen)
{
	pid_t *procs;
	size_t n;

	if (cgroup_procs(g, &procs, &n) < 0) {
		snprintf(err, errlen, "cannot list the processes of cgroup '%s': %s", g->path,
			 strerror(errno));
		return -1;
	}
	if (n && !g->origin[0]) {
		snprintf(err, errlen, "cgroup '%s' still holds %zu process%s and the cgroup "
			 "collect started in is unknown; it is left in place", g->path, n,
			 n == 1 ? "" : "es");
		free(procs);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		if (write_pid(g->origin, procs[i]) == 0) {
			(*moved)++;
		} else if (errno != ESRCH) { /* one that ended meanwhile has left anyway */
			snprintf(err, errlen, "cannot move pid %d from cgroup '%s' back to '%s': %s; "
				 "it is left in place", (int)procs[i], g->path, g->origin,
				 strerror(errno));
			free(procs);
			return -1;
		}
	}
	free(procs);
	return 0;
}

int
cgroup_empty_remove(struct launch_cgroup *g, int tries, size_t *moved, char *err,
		    size_t errlen)
{
	struct timespec pause = { 0, 10000000 };
	int e = 0;

	*moved = 0;
	if (!g->path[0])
		return 0;
	if (g->fd >= 0)
		close(g->fd);
	g->fd = -1;
	/* A process may fork into the cgroup while the others leave, and a task that just
	 * ended leaves it late (rmdir says EBUSY meanwhile): move and retry for a while. */
	for (int i = 0; i < tries; i++) {
		if (move_back(g, moved, err, errlen) < 0)
			return -1;
		if (rmdir(g->path) == 0) {
			g->path[0] = 0;
			return 0;
		}
		if ((e = errno) != EBUSY)
			break;
		nanosleep(&pause, NULL);
	}
	snprintf(err, errlen, "cannot remove cgroup '%s': %s", g->path, strerror(e));
	return -1;
}

int
cgroup_remove(struct launch_cgroup *g, size_t *moved, char *err, size_t errlen)
{
	int rc = cgroup_empty_remove(g, REMOVE_TRIES, moved, err, errlen);

	/* Warned about once: collect's exit does not try again. */
	g->path[0] = 0;
	return rc;
}
