/*
 * commit: the end-of-run sweep.  Every temporary file of a session is named
 * ".<kind>-<session>-<window>-<start>.<ext>.tmp-XXXXXX" (lib/tmpfile.c, publish.c), so commit
 * can find exactly this session's, and no other session's, in the output directory: those
 * of an emitter that was killed (SIGKILL cannot be caught), or that no stage handed over.
 * Only regular files of this uid without other links are removed, as in accept.c.
 *
 * Everything here is async-signal-safe (system calls and plain string work on static
 * data), so the handler of SIGTERM, SIGHUP and SIGPIPE can sweep before the process ends.
 */
#include "commit.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int sweep_dirfd = -1;
static char session[17];

void
commit_sweep_init(int dirfd, uint64_t session_id)
{
	static const char hex[] = "0123456789abcdef";

	for (int i = 0; i < 16; i++)
		session[i] = hex[(session_id >> (60 - 4 * i)) & 15];
	session[16] = '\0';
	sweep_dirfd = dirfd;
}

static int
digits(const char **p, size_t min, size_t max)
{
	size_t n = 0;

	while (n < max && (*p)[n] >= '0' && (*p)[n] <= '9')
		n++;
	*p += n;
	return n >= min;
}

/* s starts with w: moves past it. */
static int
skip(const char **s, const char *w)
{
	size_t n = strlen(w);

	if (strncmp(*s, w, n) != 0)
		return 0;
	*s += n;
	return 1;
}

/* 1 when name is a temporary file name of this session (lib/outname.c's names). */
static int
session_temp(const char *name)
{
	static const char *const prefixes[] = { "cpu-", "off-cpu-", "heap-", "physical-alloc-",
						"physical-usage-", "firefox-", "diagnostics-" };
	static const char *const exts[] = { "pb.gz.tmp-", "svg.tmp-", "collapsed.tmp-",
					    "json.gz.tmp-", "jslb.gz.tmp-", "json.tmp-" };
	const char *p = name;
	int ok = 0;

	if (!skip(&p, "."))
		return 0;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]) && !ok; i++)
		ok = skip(&p, prefixes[i]);
	if (!ok || !skip(&p, session) || !skip(&p, "-") || !digits(&p, 6, 10) || !skip(&p, "-"))
		return 0;
	skip(&p, "-");
	if (!digits(&p, 1, 19) || !skip(&p, "."))
		return 0;
	ok = 0;
	for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]) && !ok; i++)
		ok = skip(&p, exts[i]);
	if (!ok || strlen(p) != 6)
		return 0;
	for (; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
			return 0;
	return 1;
}

void
commit_sweep(void)
{
	static char buf[16384];
	struct stat st;
	int fd;
	ssize_t n;

	if (sweep_dirfd < 0)
		return;
	/* A descriptor of its own: its read position is the sweep's alone. */
	fd = openat(sweep_dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	while ((n = getdents64(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off < n;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);

			off += d->d_reclen;
			if (!session_temp(d->d_name) ||
			    fstatat(sweep_dirfd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
			    !S_ISREG(st.st_mode) || st.st_uid != geteuid() || st.st_nlink != 1)
				continue;
			unlinkat(sweep_dirfd, d->d_name, 0);
		}
	}
	close(fd);
}

static const int swept_signals[] = { SIGTERM, SIGHUP, SIGPIPE };

static void
on_signal(int sig)
{
	commit_sweep();
	raise(sig); /* SA_RESETHAND: now the default action */
}

void
commit_sweep_on_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESETHAND };

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(swept_signals) / sizeof(swept_signals[0]); i++)
		sigaddset(&sa.sa_mask, swept_signals[i]);
	for (size_t i = 0; i < sizeof(swept_signals) / sizeof(swept_signals[0]); i++)
		sigaction(swept_signals[i], &sa, NULL);
}

void
commit_sweep_block(int block)
{
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(swept_signals) / sizeof(swept_signals[0]); i++)
		sigaddset(&set, swept_signals[i]);
	sigprocmask(block ? SIG_BLOCK : SIG_UNBLOCK, &set, NULL);
}
