/*
 * /proc readers for the target.  Threads may exit at any moment, so a missing file is a
 * normal result (-1), never an error message here.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "procfs.h"

int
tidlist_add(struct tidlist *l, pid_t tid)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		pid_t *v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return -1;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = tid;
	return 0;
}

int
tidlist_has(const struct tidlist *l, pid_t tid)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i] == tid)
			return 1;
	return 0;
}

void
tidlist_free(struct tidlist *l)
{
	free(l->v);
	l->v = NULL;
	l->n = l->cap = 0;
}

int
procfs_tasks(pid_t pid, struct tidlist *out)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return -1;
	out->n = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);
		if (*end || tid <= 0)
			continue;
		if (tidlist_add(out, (pid_t)tid) < 0) {
			closedir(d);
			errno = ENOMEM;
			return -1;
		}
	}
	closedir(d);
	return 0;
}

int
procfs_comm(pid_t pid, pid_t tid, char *buf, size_t len)
{
	char path[80];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

int
procfs_exe(pid_t pid, char *buf, size_t len)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	ssize_t n = readlink(path, buf, len - 1);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return 0;
}

int
procfs_start_stack(pid_t pid, uint64_t *top)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	/* The name (field 2) may hold spaces and parentheses: the fields go on after the last
	 * ')', from the state (field 3). */
	char *p = strrchr(buf, ')');
	if (!p)
		return -1;
	p++;
	for (int field = 3; field < 28; field++) {
		p += strspn(p, " ");
		p += strcspn(p, " ");
	}
	char *e;
	unsigned long long v = strtoull(p, &e, 10);
	if (e == p || v == 0)
		return -1;
	*top = v;
	return 0;
}

pid_t
procfs_ns_pid(pid_t pid)
{
	char path[64], line[256];
	long last = pid;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return pid;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "NSpid:", 6)) {
			char *p = line + 6, *e;
			for (long v; (v = strtol(p, &e, 10)), e != p; p = e)
				last = v;
		}
	fclose(f);
	return last > 0 ? (pid_t)last : pid;
}

/* "7f..-7f.. r-xp 00001000 08:01 1234   /usr/lib/libc.so.6" */
static int
parse_map_line(char *line, struct procmap *m)
{
	char perms[8] = ""; /* a short field ("r") leaves the flags it lacks unset, not unread */
	int off = 0;
	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*u %n", &m->start,
		   &m->end, perms, &m->pgoff, &off) < 4 || off == 0)
		return -1;
	m->prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
		  (perms[2] == 'x' ? PROT_EXEC : 0);
	m->flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
	char *p = line + off;
	p[strcspn(p, "\n")] = 0;
	snprintf(m->path, sizeof(m->path), "%s", p);
	return 0;
}

int
procfs_maps(pid_t pid, int (*fn)(const struct procmap *m, void *arg), void *arg)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	int rc = procfs_maps_file(f, fn, arg);
	fclose(f);
	return rc;
}

int
procfs_maps_file(FILE *f, int (*fn)(const struct procmap *m, void *arg), void *arg)
{
	char *line = NULL;
	size_t cap = 0;
	struct procmap *m = malloc(sizeof(*m));
	int rc = m ? 0 : -1;
	while (m && getline(&line, &cap, f) > 0) {
		if (parse_map_line(line, m) == 0 && fn(m, arg))
			break;
	}
	free(m);
	free(line);
	return rc;
}

/* Opens a regular file only: the path is the target's to choose, and a FIFO there would
 * hold collect (root) in open(), a device in the read of its build id. */
static int
open_regular(const char *p)
{
	struct stat st;
	int fd = open(p, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	return fd;
}

int
procfs_open_mapping(pid_t pid, uint64_t start, uint64_t end, const char *path)
{
	char p[PATH_MAX + 64];
	snprintf(p, sizeof(p), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, start, end);
	int fd = open_regular(p);
	if (fd >= 0 || path[0] != '/')
		return fd;
	snprintf(p, sizeof(p), "/proc/%d/root%s", (int)pid, path);
	return open_regular(p);
}
