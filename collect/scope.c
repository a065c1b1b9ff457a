/*
 * The process scope of a recording and the bookkeeping of the cgroup scope.  In the cgroup
 * scope every record the cgroup events deliver belongs to the recording (the kernel gives
 * cgroup events the side-band records of the cgroup's tasks only), so the stream carries
 * all processes; unwind gives a forked child its parent's mappings.  Off-CPU alone watches
 * the CPUs instead, whose events see every task: there a record belongs to the recording
 * when its process descends from one known, or /proc says it is in the cgroup.  A process whose fork was
 * not written (it appeared during the calibration, when only the target is followed) is read
 * from /proc at its first sample.
 */
#include <err.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "scope.h"

void
scope_init(struct scope *s, pid_t target)
{
	s->target = target;
	s->requested = s->effective = "process";
	s->reason[0] = 0;
	s->cgroup = 0;
	s->cg.path[0] = 0;
	s->cg.fd = -1;
	s->adopted = 0;
	s->host = 0;
}

void
scope_host(struct scope *s)
{
	s->target = 0;
	s->requested = s->effective = "host";
	s->host = 1;
}

static const char partial_hint[] = "--allow-partial profiles the command's own pid only";

void
scope_check(int allow_partial)
{
	char parent[PATH_MAX], why[PATH_MAX + 100];
	if (!allow_partial && cgroup_parent(parent, sizeof(parent), why, sizeof(why)) < 0)
		errx(1, "launch needs a cgroup v2 hierarchy: %s; %s", why, partial_hint);
}

void
scope_launch(struct scope *s, uint64_t session_id, int allow_partial, int verbose)
{
	char why[PATH_MAX + 200];

	s->requested = "cgroup";
	if (cgroup_create(&s->cg, session_id, s->target, why, sizeof(why)) == 0) {
		s->effective = "cgroup";
		s->cgroup = 1;
		if (verbose)
			warnx("launch cgroup %s (id %llu)", s->cg.path,
			      (unsigned long long)s->cg.id);
		return;
	}
	if (!allow_partial) {
		/* The command never ran a single instruction: it goes with us. */
		kill(s->target, SIGKILL);
		waitpid(s->target, NULL, 0);
		errx(1, "launch: %s; %s", why, partial_hint);
	}
	s->effective = "process";
	snprintf(s->reason, sizeof(s->reason),
		 "%s; profiling pid %d only, without its descendants (--allow-partial)", why,
		 (int)s->target);
	warnx("launch: %s", s->reason);
}

void
scope_container(struct scope *s, pid_t init, const char *cgroup)
{
	char why[PATH_MAX + 200];

	s->target = init;
	s->requested = "cgroup";
	if (s->cgroup)
		cgroup_release(&s->cg);
	s->cgroup = 0;
	if (cgroup_adopt(&s->cg, cgroup, why, sizeof(why)) < 0)
		errx(1, "container cgroup: %s", why);
	s->effective = "cgroup";
	s->cgroup = 1;
	s->adopted = 1;
}

void
scope_announce(const struct scope *s, struct emit *out, uint64_t time)
{
	if (!s->reason[0])
		return;
	char text[sizeof(s->reason) + 16];
	snprintf(text, sizeof(text), "launch: %s", s->reason);
	struct fr_warning w = { time, str_of(text) };
	emit_warning(out, &w);
}

uint64_t
scope_cgroup_id(const struct scope *s)
{
	return s->cgroup ? s->cg.id : 0;
}

void
scope_unfiltered(struct scope *s, int unfiltered)
{
	s->unfiltered = unfiltered;
}

static void
add_to(struct u32set *set, uint32_t pid)
{
	if (u32set_add(set, pid) < 0)
		errx(1, "out of memory");
}

int
scope_covers(struct scope *s, uint32_t pid)
{
	if (pid == (uint32_t)s->target || s->host)
		return 1;
	if (!s->cgroup)
		return 0;
	if (!s->unfiltered || u32set_has(&s->known, pid) || u32set_has(&s->inside, pid))
		return 1;
	if (u32set_has(&s->outside, pid))
		return 0;
	int in = cgroup_holds(&s->cg, (pid_t)pid);
	add_to(in ? &s->inside : &s->outside, pid);
	return in;
}

void
scope_known(struct scope *s, uint32_t pid)
{
	if (s->cgroup)
		add_to(&s->known, pid);
}

void
scope_forked(struct scope *s, uint32_t pid, uint32_t ppid)
{
	if (ppid == (uint32_t)s->target || u32set_has(&s->known, ppid) ||
	    (s->unfiltered && u32set_has(&s->inside, ppid)))
		scope_known(s, pid);
}

void
scope_gone(struct scope *s, uint32_t pid)
{
	if (pid != (uint32_t)s->target)
		u32set_remove(&s->known, pid);
	u32set_remove(&s->inside, pid);
	u32set_remove(&s->outside, pid);
}

int
scope_first_sample(struct scope *s, uint32_t pid)
{
	if (!s->cgroup || pid == (uint32_t)s->target || u32set_has(&s->known, pid))
		return 0;
	scope_known(s, pid);
	return 1;
}

void
scope_each_process(struct scope *s, void (*fn)(void *arg, pid_t pid), void *arg)
{
	pid_t *procs;
	size_t n;
	if (!s->cgroup)
		return;
	if (cgroup_procs(&s->cg, &procs, &n) < 0) {
		/* A stopping container's runtime removes its cgroup: the restart is followed. */
		if (!(s->adopted && errno == ENOENT))
			warn("cannot list the processes of cgroup %s", s->cg.path);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (procs[i] == s->target)
			continue;
		scope_known(s, (uint32_t)procs[i]);
		fn(arg, procs[i]);
	}
	free(procs);
}

void
scope_finish(struct scope *s, struct emit *out, uint64_t time, int verbose)
{
	char why[3 * PATH_MAX + 200], text[3 * PATH_MAX + 220];
	if (!s->cgroup)
		return;
	size_t moved = 0;
	if (s->adopted) {
		/* The container's runtime owns its cgroup. */
		cgroup_release(&s->cg);
		s->cgroup = 0;
	} else if (cgroup_remove(&s->cg, &moved, why, sizeof(why)) == 0) {
		if (verbose)
			warnx("removed the launch cgroup, %zu process%s moved back to %s", moved,
			      moved == 1 ? "" : "es", s->cg.origin);
	} else {
		snprintf(text, sizeof(text), "launch: %s", why);
		warnx("%s", text);
		struct fr_warning w = { time ? time - 1 : 0, str_of(text) };
		emit_warning(out, &w);
	}
	u32set_free(&s->known);
	u32set_free(&s->inside);
	u32set_free(&s->outside);
}
