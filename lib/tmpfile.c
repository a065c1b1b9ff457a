#include "tmpfile.h"
#include "fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <poll.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TMP_SUFFIX ".tmp-XXXXXX"

/* The files this process created and still owns, for the signal handler and the exit
 * handler: a stage owns a few at a time (an emitter, one window's files), so a file beyond
 * these is just not removed then. */
#define MAX_OWNED 16
static char *volatile owned[MAX_OWNED];

static void
own(char *path)
{
	for (int i = 0; i < MAX_OWNED; i++)
		if (!owned[i]) {
			owned[i] = path;
			return;
		}
}

static void
disown(const char *path)
{
	for (int i = 0; i < MAX_OWNED; i++)
		if (owned[i] == path)
			owned[i] = NULL;
}

/*
 * The files handed on last (announced downstream), newest last.  They are the next stage's
 * and commit's, unless the stream that carried their frames broke: a file frame still in a
 * pipe when the stage behind it died reaches no commit, so when this stage's output has no
 * reader any more (SIGPIPE, or at exit), those still under their temporary name go too.
 * One that commit published is already renamed, and unlinking its old name does nothing.
 */
#define MAX_HANDED 32
static char *volatile handed[MAX_HANDED];
static unsigned nhanded;

/* Async-signal-safe: 1 when stdout is a pipe or socket nobody reads any more. */
static int
output_gone(void)
{
	struct pollfd p = { .fd = 1, .events = POLLOUT };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLERR);
}

static void
remove_handed(void)
{
	for (int i = 0; i < MAX_HANDED; i++) {
		char *p = handed[i];
		if (p)
			unlink(p);
	}
}

/* SIGINT is not here: the stages ignore it (collect ends the stream instead). */
static const int fatal_signals[] = { SIGTERM, SIGHUP, SIGPIPE };
#define NFATAL (sizeof(fatal_signals) / sizeof(fatal_signals[0]))

/* Async-signal-safe. */
static void
remove_owned(void)
{
	for (int i = 0; i < MAX_OWNED; i++) {
		char *p = owned[i];
		if (p)
			unlink(p);
	}
}

static void
at_exit(void)
{
	remove_owned();
	if (output_gone())
		remove_handed();
}

/* Unlink, then the default action (SA_RESETHAND) once this returns. */
static void
on_signal(int sig)
{
	remove_owned();
	if (sig == SIGPIPE || output_gone())
		remove_handed();
	raise(sig);
}

static void
signals(int how)
{
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < NFATAL; i++)
		sigaddset(&set, fatal_signals[i]);
	sigprocmask(how, &set, NULL);
}

void
tmpfile_remove_on_term(void)
{
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESETHAND };

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < NFATAL; i++)
		sigaddset(&sa.sa_mask, fatal_signals[i]);
	for (size_t i = 0; i < NFATAL; i++)
		sigaction(fatal_signals[i], &sa, NULL);
	/* Every errx() after a file was created, but before it was handed over (a second
	 * profile of the window failed, a write error), exits through here. */
	atexit(at_exit);
}

/* mkostemp creates 0600; published profiles should get the permissions a normal create
 * would give, so read the umask (set and restore: there is no getter). */
static mode_t
create_mode(void)
{
	mode_t mask = umask(022);

	umask(mask);
	return 0666 & ~mask;
}

int
tmpfile_create(struct tmpfile *t, const char *dir, const char *final_name)
{
	size_t dlen = strlen(dir), n;

	t->fd = -1;
	t->created = 0;
	t->err[0] = 0;
	n = dlen + 2 + strlen(final_name) + sizeof(TMP_SUFFIX);
	if (!(t->path = malloc(n))) {
		snprintf(t->err, sizeof(t->err), "out of memory");
		return -1;
	}
	snprintf(t->path, n, "%s/.%s" TMP_SUFFIX, dir, final_name);
	t->name = t->path + dlen + 1;
	/* No signal between the file's creation and its place in owned. */
	signals(SIG_BLOCK);
	t->fd = mkostemp(t->path, O_CLOEXEC);
	t->created = t->fd >= 0;
	if (t->created)
		own(t->path);
	signals(SIG_UNBLOCK);
	if (t->fd < 0 || fchmod(t->fd, create_mode()) < 0) {
		snprintf(t->err, sizeof(t->err), "cannot create '%s': %s", t->path,
			 strerror(errno));
		tmpfile_discard(t);
		return -1;
	}
	return 0;
}

int
tmpfile_write(struct tmpfile *t, const void *p, size_t n)
{
	if (fs_write_all(t->fd, p, n) < 0) {
		snprintf(t->err, sizeof(t->err), "cannot write '%s': %s", t->path,
			 strerror(errno));
		return -1;
	}
	return 0;
}

int
tmpfile_finish(struct tmpfile *t)
{
	int rc = 0;

	if (fsync(t->fd) < 0) {
		snprintf(t->err, sizeof(t->err), "cannot sync '%s': %s", t->path, strerror(errno));
		rc = -1;
	}
	/* close can report a delayed write error (NFS); count it as a failure too. */
	if (close(t->fd) < 0 && rc == 0) {
		snprintf(t->err, sizeof(t->err), "cannot close '%s': %s", t->path, strerror(errno));
		rc = -1;
	}
	t->fd = -1;
	return rc;
}

void
tmpfile_discard(struct tmpfile *t)
{
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
	if (t->created && t->path)
		unlink(t->path);
	t->created = 0;
	if (t->path)
		disown(t->path);
	free(t->path);
	t->path = NULL;
	t->name = NULL;
}

void
tmpfile_release(struct tmpfile *t)
{
	char *old;

	if (!t->path)
		return;
	signals(SIG_BLOCK);
	disown(t->path);
	if (t->created) {
		old = handed[nhanded % MAX_HANDED];
		handed[nhanded++ % MAX_HANDED] = t->path;
		free(old);
	} else {
		free(t->path);
	}
	signals(SIG_UNBLOCK);
	t->path = NULL;
	t->name = NULL;
}
