/*
 * An exec of the target after the recording started (manual: "Target lifecycle"): the
 * image the mode was chosen for is gone, so the recording of that image ends with a
 * warning, the preflight runs again, the unwind mode is chosen again for the new image and
 * the events are reopened.  Two signals find an exec: the COMM record the kernel flags as
 * an exec (immediate), and a change of the executable's identity, checked about once a
 * second by the loop, which catches an exec whose record was lost.
 */
#include <err.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "collect.h"
#include "preflight.h"
#include "procfs.h"

static int
identity(pid_t pid, uint64_t *dev, uint64_t *ino)
{
	char path[64];
	struct stat st;
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if (stat(path, &st) < 0)
		return -1;
	*dev = (uint64_t)st.st_dev;
	*ino = (uint64_t)st.st_ino;
	return 0;
}

void
exec_identity(struct collect *c)
{
	if (identity(c->o.pid, &c->exe_dev, &c->exe_ino) < 0)
		c->exe_dev = c->exe_ino = 0;
}

int
exec_identity_changed(struct collect *c)
{
	uint64_t dev, ino;
	/* Unreadable: the target is exiting, which the pidfd reports. */
	if (identity(c->o.pid, &dev, &ino) < 0)
		return 0;
	return dev != c->exe_dev || ino != c->exe_ino;
}

/* The warning is stamped just before the exec so that it belongs to the window the exec
 * ends (a window takes the warnings older than its end); it is written before the next
 * FR_ROUND lets that window close. */
void
exec_warn(struct collect *c, uint64_t time, int synth_comm)
{
	char exe[PATH_MAX] = "", comm[64] = "", text[PATH_MAX + 64];
	if (procfs_exe(c->o.pid, exe, sizeof(exe)) < 0)
		snprintf(exe, sizeof(exe), "(unknown)");
	if (synth_comm) {
		if (procfs_comm(c->o.pid, c->o.pid, comm, sizeof(comm)) < 0)
			comm[0] = 0;
		struct fr_comm fc = { .time = time, .pid = (uint32_t)c->o.pid,
				      .tid = (uint32_t)c->o.pid, .flags = COMM_EXEC,
				      .comm = str_of(comm) };
		emit_comm(&c->out, &fc);
	}
	snprintf(text, sizeof(text), "the target executed a new image: %s", exe);
	struct fr_warning w = { time ? time - 1 : 0, str_of(text) };
	emit_warning(&c->out, &w);
}

int
exec_handle(struct collect *c, int pidfd)
{
	struct preflight pf;
	int resumed = 1, end;

	if (c->o.verbose)
		warnx("the target executed a new image: choosing the unwind mode again");
	perf_set_close(&c->perf);
	fallback_exec(&c->fb);
	c->fallback_reason[0] = 0; /* a new image gets a new choice */
	preflight_run(&c->o, &pf);
	snprintf(c->release, sizeof(c->release), "%s", pf.release);
	exec_identity(c);
	if ((end = collect_choose_mode(c, pidfd, pf.nthreads, &resumed)) != 0)
		return end;
	/* The calibration may have seen another exec: the image is the one now running. */
	exec_identity(c);
	synth_target(c, c->release);
	collect_open_events(c, strcmp(c->mode, "dwarf") == 0, pf.nthreads);
	synth_existing(c);
	emit_flush(&c->out);
	return 0;
}
