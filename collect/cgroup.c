/*
 * cgroup v2 plumbing for launch.  The name carries the session id and the command's pid, so
 * two recordings never share a cgroup and a leftover one says where it came from.
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
#include "outname.h"

#define REMOVE_TRIES 200        /* x 10 ms: a task that exited leaves its cgroup late */

/* The cgroup to remove should collect die on an error after creating it. */
static struct launch_cgroup *live;

static void
remove_at_exit(void)
{
	/* Best effort: a cgroup that still holds tasks refuses, and is left as it is. */
	if (live && live->path[0])
		rmdir(live->path);
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

/* "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [TAGS...] - FSTYPE SOURCE SUPEROPTS" */
static int
mount_point(char *buf, size_t len)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[8192];
	int found = 0;
	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		char *sep = strstr(line, " - ");
		char mnt[4096];
		if (!sep || strncmp(sep + 3, "cgroup2 ", 8) != 0)
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1)
			continue;
		unescape(mnt);
		found = snprintf(buf, len, "%s", mnt) < (int)len;
	}
	fclose(f);
	return found;
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
	} else if (!mount_point(buf, len)) {
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

int
cgroup_remove(struct launch_cgroup *g, char *err, size_t errlen)
{
	struct timespec pause = { 0, 10000000 };
	int e = 0;

	if (!g->path[0])
		return 0;
	if (g->fd >= 0)
		close(g->fd);
	g->fd = -1;
	for (int i = 0; i < REMOVE_TRIES; i++) {
		pid_t *procs;
		size_t n;
		if (rmdir(g->path) == 0) {
			g->path[0] = 0;
			return 0;
		}
		if ((e = errno) != EBUSY || cgroup_procs(g, &procs, &n) < 0)
			break;
		free(procs);
		if (n)
			return (int)(n < 1000000 ? n : 1000000);
		nanosleep(&pause, NULL);
	}
	snprintf(err, errlen, "cannot remove cgroup '%s': %s", g->path, strerror(e));
	return -1;
}
