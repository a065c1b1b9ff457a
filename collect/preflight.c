/*
 * Preflight: root, kernel 5.4+, the target exists, runs our architecture, has at most
 * PREFLIGHT_MAX_THREADS threads, and perf_event_open works on it.  The thread limit is the
 * manual's fixed one: --max-threads bounds the perf backend (attach.c), not this check.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "elfid.h"
#include "perf.h"
#include "preflight.h"
#include "procfs.h"

#define MIN_MAJOR 5
#define MIN_MINOR 4

static int
exe_machine(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int m = elfid_machine(fd);
	close(fd);
	return m;
}

int
preflight_root(char *why, size_t whylen)
{
	if (geteuid() == 0)
		return 0;
	snprintf(why, whylen, "preflight root: collect must run as root");
	return -1;
}

int
preflight_kernel_at_least(const struct preflight *pf, int major, int minor)
{
	return pf->major > major || (pf->major == major && pf->minor >= minor);
}

int
preflight_kernel(struct preflight *pf, char *why, size_t whylen)
{
	struct utsname u;
	if (uname(&u) < 0) {
		snprintf(why, whylen, "preflight kernel: uname: %s", strerror(errno));
		return -1;
	}
	snprintf(pf->release, sizeof(pf->release), "%s", u.release);
	if (sscanf(u.release, "%d.%d", &pf->major, &pf->minor) != 2) {
		snprintf(why, whylen, "preflight kernel: cannot read the version of '%s'",
			 u.release);
		return -1;
	}
	if (!preflight_kernel_at_least(pf, MIN_MAJOR, MIN_MINOR)) {
		snprintf(why, whylen, "preflight kernel: linux %s is older than %d.%d",
			 u.release, MIN_MAJOR, MIN_MINOR);
		return -1;
	}
	return 0;
}

int
preflight_target(pid_t pid, struct preflight *pf, char *why, size_t whylen)
{
	char path[64];
	if (kill(pid, 0) < 0 && errno == ESRCH) {
		snprintf(why, whylen, "preflight target: no process %d", (int)pid);
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	int theirs = exe_machine(path), ours = exe_machine("/proc/self/exe");
	if (theirs < 0)
		snprintf(why, whylen, "preflight architecture: cannot read the ELF header of "
			 "'%s'", path);
	else if (ours < 0)
		snprintf(why, whylen, "preflight architecture: cannot read our own ELF header");
	else if (theirs != ours)
		snprintf(why, whylen, "preflight architecture: target e_machine %d differs from "
			 "ours %d", theirs, ours);
	else {
		pf->e_machine = theirs;
		return 0;
	}
	return -1;
}

int
preflight_threads(pid_t pid, struct preflight *pf, char *why, size_t whylen)
{
	struct tidlist t = { 0 };
	if (procfs_tasks(pid, &t) < 0) {
		snprintf(why, whylen, "preflight threads: cannot list /proc/%d/task: %s",
			 (int)pid, strerror(errno));
		return -1;
	}
	pf->nthreads = (int)t.n;
	tidlist_free(&t);
	if (pf->nthreads > PREFLIGHT_MAX_THREADS) {
		snprintf(why, whylen, "preflight threads: target has %d threads, more than the "
			 "limit %d", pf->nthreads, PREFLIGHT_MAX_THREADS);
		return -1;
	}
	return 0;
}

int
preflight_perf(pid_t pid, char *why, size_t whylen)
{
	char e[256];
	if (perf_probe(pid, e, sizeof(e)) == 0)
		return 0;
	snprintf(why, whylen, "preflight perf access: %s", e);
	return -1;
}

void
preflight_run(const struct collect_opts *o, struct preflight *pf)
{
	char why[320];
	/* --host has no target: the machine runs our architecture, and its threads are
	 * sampled by CPU, whatever their number. */
	pid_t pid = o->host ? getpid() : o->pid;
	memset(pf, 0, sizeof(*pf));
	if (preflight_root(why, sizeof(why)) < 0 || preflight_kernel(pf, why, sizeof(why)) < 0 ||
	    preflight_target(pid, pf, why, sizeof(why)) < 0 ||
	    (!o->host && preflight_threads(pid, pf, why, sizeof(why)) < 0) ||
	    preflight_perf(pid, why, sizeof(why)) < 0)
		errx(1, "%s", why);
}
