/*
 * The capabilities collect keeps after setup, each for something its loop still does
 * (collect/loop.c and what it calls); docs/privileges.md has the same list.
 */
#include <cap-ng.h>
#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "privdrop.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif
#ifndef CAP_CHECKPOINT_RESTORE
#define CAP_CHECKPOINT_RESTORE 40
#endif

static const unsigned keep[] = {
	/* Reopening the sampling events after an exec of the target or the frame-pointer to
	 * DWARF fallback (exec.c, fallback.c): perf_event_open of another process with
	 * kernel callchains (perf_event_paranoid 2, and Debian's 3). */
	CAP_PERFMON,
	/* The off-CPU drain's map lookups: before Linux 6.5, with unprivileged BPF disabled,
	 * every bpf() call checks for it, even on a map collect holds. */
	CAP_BPF,
	/* Ptrace-mode access to the target and the processes of a launch cgroup, of another
	 * uid or not dumpable: /proc/PID/maps, exe, root/... (synth.c, exec.c, modcache.c)
	 * and perf_event_open's ptrace check when the events are reopened. */
	CAP_SYS_PTRACE,
	/* /proc/PID/map_files/..., the module cache's way to the mapped file (procfs.c). */
	CAP_CHECKPOINT_RESTORE,
	/* Reading those files whatever their modes, and traversing map_files (mode 0500,
	 * owned by the target's uid). */
	CAP_DAC_READ_SEARCH,
	/* Writing into a module cache owned by another uid (OUTPUT/.modules), and the
	 * allocator probes made again in tracefs's uprobe_events after an exec (uprobe.h). */
	CAP_DAC_OVERRIDE,
	/* Giving what the module cache gets during the run (a module mapped later, a new
	 * process of a launch) to the owner of the output directory (modcache.c). */
	CAP_CHOWN,
	/* Raising the hard open-file limit when the events are reopened for more threads
	 * (mode.c). */
	CAP_SYS_RESOURCE,
	/* Mapping reopened rings beyond perf_event_mlock_kb: a DWARF ring is 4 MiB per CPU. */
	CAP_IPC_LOCK,
};

/* The newest capability the kernel knows; CAP_LAST_CAP of the headers when unreadable. */
static int
last_cap(void)
{
	FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");
	int n = -1;

	if (f) {
		if (fscanf(f, "%d", &n) != 1)
			n = -1;
		fclose(f);
	}
	return n > 0 ? n : CAP_LAST_CAP;
}

void
privdrop_nondumpable(void)
{
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		err(1, "PR_SET_DUMPABLE");
}

/* Keeps cap when the kernel knows it and collect has it (a container may have given it
 * fewer than all); bit cap of *kept says so. */
static void
keep_one(unsigned cap, int last, unsigned long long held, unsigned long long *kept)
{
	if ((int)cap > last || !(held >> cap & 1))
		return;
	if (capng_update(CAPNG_ADD, CAPNG_EFFECTIVE | CAPNG_PERMITTED, cap) < 0)
		errx(1, "cannot keep capability %u", cap);
	*kept |= 1ull << cap;
}

void
privdrop_keep_needed(int verbose)
{
	int last = last_cap();
	unsigned long long held = 0, kept = 0;

	if (capng_get_caps_process() < 0)
		errx(1, "cannot read the capabilities of collect");
	for (int cap = 0; cap <= last && cap < 64; cap++)
		if (capng_have_capability(CAPNG_PERMITTED, (unsigned)cap))
			held |= 1ull << cap;
	capng_clear(CAPNG_SELECT_ALL);
	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		keep_one(keep[i], last, held, &kept);
	/* A kernel older than 5.9 lacks one of CAP_PERFMON, CAP_BPF and
	 * CAP_CHECKPOINT_RESTORE: what they allow is CAP_SYS_ADMIN's there. */
	if (last < CAP_CHECKPOINT_RESTORE)
		keep_one(CAP_SYS_ADMIN, last, held, &kept);
	/* Capabilities are per thread: collect has only this one (it starts none). */
	int rc = capng_apply(CAPNG_SELECT_ALL);
	/* -4: started without CAP_SETPCAP, so the bounding set stays; nothing was gained. */
	if (rc < 0 && rc != -4)
		errx(1, "cannot drop capabilities (libcap-ng error %d)", rc);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		err(1, "PR_SET_NO_NEW_PRIVS");
	if (verbose) {
		char *text = capng_print_caps_text(CAPNG_PRINT_BUFFER, CAPNG_EFFECTIVE);
		warnx("capabilities kept after setup (%#llx): %s", kept, text ? text : "none");
		free(text);
	}
}
