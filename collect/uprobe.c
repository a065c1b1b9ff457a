/* Uprobes through tracefs (uprobe.h). */
#include "uprobe.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "errbuf.h"
#include "tracefs.h"

#define GROUP_PREFIX "rustprofile_"
#define EVENTS TRACEFS_DIR "/uprobe_events"

/* One command to uprobe_events; 0 or -errno. */
static int
command(const char *line)
{
	int fd = open(EVENTS, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t n = strlen(line);
	ssize_t w = write(fd, line, n);
	int rc = w == (ssize_t)n ? 0 : w < 0 ? -errno : -EIO;
	close(fd);
	return rc;
}

static int
event_id(const char *event, long long *id)
{
	char path[sizeof(TRACEFS_DIR) + UPROBE_NAME_MAX + 16], buf[32];
	snprintf(path, sizeof(path), "%s/events/%s/id", TRACEFS_DIR, event);
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	int ok = fgets(buf, sizeof(buf), f) != NULL;
	fclose(f);
	char *end;
	*id = ok ? strtoll(buf, &end, 10) : -1;
	return ok && *id > 0 ? 0 : -EINVAL;
}

/* "rustprofile_<pid>/<name>_<seq>", the name kept to the characters tracefs accepts. */
static void
event_name(struct uprobe *u, const char *name)
{
	static unsigned seq;
	char clean[32];
	size_t k = 0;
	for (const char *p = name; *p && k + 1 < sizeof(clean); p++)
		clean[k++] = isalnum((unsigned char)*p) || *p == '_' ? *p : '_';
	clean[k] = 0;
	snprintf(u->event, sizeof(u->event), GROUP_PREFIX "%d/%s_%u", (int)getpid(), clean,
		 seq++);
}

static int
open_event(long long id, pid_t pid)
{
	struct perf_event_attr a = { 0 };
	a.size = sizeof(a);
	a.type = PERF_TYPE_TRACEPOINT;
	a.config = (uint64_t)id;
	a.sample_period = 1;
	a.wakeup_events = 1;
	return (int)syscall(SYS_perf_event_open, &a, pid, pid >= 0 ? -1 : 0, -1,
			    PERF_FLAG_FD_CLOEXEC);
}

int
uprobe_open(struct uprobe *u, const char *path, uint64_t off, int ret, const char *name,
	    pid_t pid, char *why, size_t whylen)
{
	u->fd = -1;
	u->event[0] = 0;
	if (strpbrk(path, " \t\n") || strlen(path) > 4000)
		return errbuf_fail(why, whylen, "cannot probe %s in %.200s: the path has white "
				   "space or is too long for uprobe_events", name, path);
	event_name(u, name);
	char line[4200];
	snprintf(line, sizeof(line), "%c:%s %s:0x%llx\n", ret ? 'r' : 'p', u->event, path,
		 (unsigned long long)off);
	int rc = command(line);
	if (rc < 0) {
		u->event[0] = 0;
		return errbuf_fail(why, whylen, "cannot make the %s probe of %s in %s: %s",
				   ret ? "return" : "entry", name, EVENTS, strerror(-rc));
	}
	long long id = -1;
	if ((rc = event_id(u->event, &id)) < 0 || (u->fd = open_event(id, pid)) < 0) {
		rc = rc < 0 ? rc : -errno;
		uprobe_remove(u, 1);
		return errbuf_fail(why, whylen, "cannot open the %s probe of %s: %s",
				   ret ? "return" : "entry", name, strerror(-rc));
	}
	return 0;
}

void
uprobe_remove(struct uprobe *u, int close_fd)
{
	if (close_fd && u->fd >= 0)
		close(u->fd);
	u->fd = -1;
	if (!u->event[0])
		return;
	char line[UPROBE_NAME_MAX + 4];
	snprintf(line, sizeof(line), "-:%s\n", u->event);
	(void)command(line);
	u->event[0] = 0;
}

/* The event of a line of uprobe_events ("p:group/name path:0x..." or "r:..."), when its
 * group is a collect's that no longer runs. */
static int
stale(const char *line, char *event, size_t len)
{
	const char *g = strchr(line, ':');
	if (!g || strncmp(g + 1, GROUP_PREFIX, strlen(GROUP_PREFIX)) != 0)
		return 0;
	g++;
	char *end;
	long pid = strtol(g + strlen(GROUP_PREFIX), &end, 10);
	size_t n = strcspn(g, " \t\n");
	if (*end != '/' || pid <= 0 || n >= len || (kill((pid_t)pid, 0) == 0 || errno != ESRCH))
		return 0;
	memcpy(event, g, n);
	event[n] = 0;
	return 1;
}

void
uprobe_sweep(void)
{
	FILE *f = fopen(EVENTS, "re");
	if (!f)
		return;
	char line[4200], gone[64][UPROBE_NAME_MAX];
	int n = 0;
	while (n < 64 && fgets(line, sizeof(line), f))
		n += stale(line, gone[n], sizeof(gone[n]));
	fclose(f);
	for (int i = 0; i < n; i++) {
		struct uprobe u = { .fd = -1 };
		memcpy(u.event, gone[i], sizeof(u.event));
		uprobe_remove(&u, 0);
	}
}
