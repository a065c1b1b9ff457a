/*
 * Retention of the JIT symbol files (docs/jit.md): OUTPUT/.modules/.jit/SESSION holds the
 * perf maps and jitdumps one session's collect copied, which a replay of its windows needs.
 * It goes with the last diagnostics file of its session, once the session has ended (its
 * .sessions list is not locked, or it is the stream's own session at its end).
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "commit.h"
#include "modrefs.h"

/* 1 when a diagnostics file of the session is in the output directory. */
static int
has_window(const struct commit *c, const char *session)
{
	char prefix[40];
	snprintf(prefix, sizeof(prefix), "diagnostics-%s-", session);
	DIR *d = fdopendir(dup(c->dirfd));
	struct dirent *e;
	int found = 0;
	if (!d)
		return 1; /* cannot tell: kept */
	rewinddir(d);
	while (!found && (e = readdir(d)))
		found = strncmp(e->d_name, prefix, strlen(prefix)) == 0;
	closedir(d);
	return found;
}

/* 1 while the session's collect runs. */
static int
running(const struct commit *c, int sessions, const char *session, int ended)
{
	char own[17];
	snprintf(own, sizeof(own), "%016llx", (unsigned long long)c->header.session_id);
	if (ended && strcmp(session, own) == 0)
		return 0;
	int fd = sessions >= 0 ? openat(sessions, session, O_RDONLY | O_CLOEXEC) : -1;
	if (fd < 0)
		return 0;
	int held = flock(fd, LOCK_SH | LOCK_NB) < 0;
	close(fd);
	return held;
}

/* Removes DIR/SESSION/PID/FILE and the directories, all collect writes there. */
static void
remove_session(int jit, const char *session)
{
	int s = openat(jit, session, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	DIR *d = s >= 0 ? fdopendir(s) : NULL;
	struct dirent *e, *f;
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		int p = openat(s, e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		DIR *pd = p >= 0 ? fdopendir(p) : NULL;
		while (pd && (f = readdir(pd)))
			if (f->d_name[0] != '.')
				unlinkat(p, f->d_name, 0);
		if (pd)
			closedir(pd);
		else if (p >= 0)
			close(p);
		unlinkat(s, e->d_name, AT_REMOVEDIR);
	}
	if (d)
		closedir(d);
	else if (s >= 0)
		close(s);
	unlinkat(jit, session, AT_REMOVEDIR);
}

void
jitprune(struct commit *c, int jit, int sessions, int ended)
{
	DIR *d = jit >= 0 ? fdopendir(dup(jit)) : NULL;
	struct dirent *e;
	if (d)
		rewinddir(d);
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.' || strlen(e->d_name) != 16)
			continue;
		if (!has_window(c, e->d_name) && !running(c, sessions, e->d_name, ended))
			remove_session(jit, e->d_name);
	}
	if (d)
		closedir(d);
}
