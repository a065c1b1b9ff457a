/* The target's image and when its exec is due (exec.h). */
#include "exec.h"

#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>

#include "procfs.h"

#define EXE_CHECK_NS 1000000000ull /* how often the executable identity is compared */

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
exec_identity(struct exec_watch *x, pid_t pid)
{
	if (identity(pid, &x->dev, &x->ino) < 0)
		x->dev = x->ino = 0;
	x->pending = 0;
}

static int
identity_changed(const struct exec_watch *x, pid_t pid)
{
	uint64_t dev, ino;
	/* Unreadable: the target is exiting, which the pidfd reports. */
	if (identity(pid, &dev, &ino) < 0)
		return 0;
	return dev != x->dev || ino != x->ino;
}

/* The warning is stamped just before the exec so that it belongs to the window the exec
 * ends (a window takes the warnings older than its end); it is written before the next
 * FR_ROUND lets that window close.  synth_comm: no COMM exec record came, so one is
 * written first. */
static void
warn(struct emit *out, pid_t pid, uint64_t time, int synth_comm)
{
	char exe[PATH_MAX] = "", comm[64] = "", text[PATH_MAX + 64];
	if (procfs_exe(pid, exe, sizeof(exe)) < 0)
		snprintf(exe, sizeof(exe), "(unknown)");
	if (synth_comm) {
		if (procfs_comm(pid, pid, comm, sizeof(comm)) < 0)
			comm[0] = 0;
		struct fr_comm fc = { .time = time, .pid = (uint32_t)pid, .tid = (uint32_t)pid,
				      .flags = COMM_EXEC, .comm = str_of(comm) };
		emit_comm(out, &fc);
	}
	snprintf(text, sizeof(text), "the target executed a new image: %s", exe);
	struct fr_warning w = { time ? time - 1 : 0, str_of(text) };
	emit_warning(out, &w);
}

int
exec_seen(struct exec_watch *x, struct emit *out, pid_t pid, uint64_t time)
{
	if (x->pending)
		return 0;
	x->pending = time ? time : 1;
	warn(out, pid, x->pending, 0);
	return 1;
}

void
exec_check_after(struct exec_watch *x, uint64_t now)
{
	x->next_check = now + EXE_CHECK_NS;
}

void
exec_check_soon(struct exec_watch *x)
{
	x->next_check = 0;
}

uint64_t
exec_due(struct exec_watch *x, struct emit *out, pid_t pid, uint64_t now)
{
	uint64_t at = x->pending;
	if (!at) {
		if (now < x->next_check)
			return 0;
		exec_check_after(x, now);
		if (!identity_changed(x, pid))
			return 0;
		/* The COMM record was missed: the exec is stamped when it was noticed. */
		warn(out, pid, now, 1);
		at = now;
	}
	x->pending = 0;
	return at;
}
