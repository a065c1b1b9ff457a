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

static void
check_kernel(struct preflight *pf)
{
	struct utsname u;
	int major = 0, minor = 0;
	if (uname(&u) < 0)
		err(1, "preflight kernel: uname");
	snprintf(pf->release, sizeof(pf->release), "%s", u.release);
	if (sscanf(u.release, "%d.%d", &major, &minor) != 2)
		errx(1, "preflight kernel: cannot read the version of '%s'", u.release);
	if (major < MIN_MAJOR || (major == MIN_MAJOR && minor < MIN_MINOR))
		errx(1, "preflight kernel: linux %s is older than %d.%d", u.release, MIN_MAJOR,
		     MIN_MINOR);
}

static void
check_target(const struct collect_opts *o, struct preflight *pf)
{
	char path[64];
	if (kill(o->pid, 0) < 0 && errno == ESRCH)
		errx(1, "preflight target: no process %d", (int)o->pid);
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)o->pid);
	int theirs = exe_machine(path), ours = exe_machine("/proc/self/exe");
	if (theirs < 0)
		errx(1, "preflight architecture: cannot read the ELF header of '%s'", path);
	if (ours < 0)
		errx(1, "preflight architecture: cannot read our own ELF header");
	if (theirs != ours)
		errx(1, "preflight architecture: target e_machine %d differs from ours %d", theirs,
		     ours);
	pf->e_machine = theirs;
}

static void
check_threads(const struct collect_opts *o, struct preflight *pf)
{
	struct tidlist t = { 0 };
	if (procfs_tasks(o->pid, &t) < 0)
		err(1, "preflight threads: cannot list /proc/%d/task", (int)o->pid);
	pf->nthreads = (int)t.n;
	tidlist_free(&t);
	if (pf->nthreads > PREFLIGHT_MAX_THREADS)
		errx(1, "preflight threads: target has %d threads, more than the limit %d",
		     pf->nthreads, PREFLIGHT_MAX_THREADS);
}

void
preflight_run(const struct collect_opts *o, struct preflight *pf)
{
	char why[256];
	memset(pf, 0, sizeof(*pf));
	if (geteuid() != 0)
		errx(1, "preflight root: collect must run as root");
	check_kernel(pf);
	check_target(o, pf);
	check_threads(o, pf);
	if (perf_probe(o->pid, why, sizeof(why)) < 0)
		errx(1, "preflight perf access: %s", why);
}
