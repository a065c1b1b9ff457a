/*
 * The process scope of a recording and the bookkeeping of the cgroup scope.  In the cgroup
 * scope every record the events deliver belongs to the recording (the kernel gives cgroup
 * events the side-band records of the cgroup's tasks only), so the stream carries all
 * processes; unwind gives a forked child its parent's mappings.  A process whose fork was
 * not written (it appeared during the calibration, when only the target is followed) is read
 * from /proc at its first sample.
 */
#include <err.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "collect.h"
#include "scope.h"

void
scope_init(struct collect *c)
{
	struct scope *s = &c->scope;
	s->requested = s->effective = "process";
	s->reason[0] = 0;
	s->cgroup = 0;
	s->cg.path[0] = 0;
	s->cg.fd = -1;
}

static const char partial_hint[] = "--allow-partial profiles the command's own pid only";

void
scope_check(const struct collect_opts *o)
{
	char parent[PATH_MAX], why[PATH_MAX + 100];
	if (!o->allow_partial && cgroup_parent(parent, sizeof(parent), why, sizeof(why)) < 0)
		errx(1, "launch needs a cgroup v2 hierarchy: %s; %s", why, partial_hint);
}

void
scope_launch(struct collect *c)
{
	struct scope *s = &c->scope;
	char why[PATH_MAX + 200];

	s->requested = "cgroup";
	if (cgroup_create(&s->cg, c->session_id, c->o.pid, why, sizeof(why)) == 0) {
		s->effective = "cgroup";
		s->cgroup = 1;
		if (c->o.verbose)
			warnx("launch cgroup %s (id %llu)", s->cg.path,
			      (unsigned long long)s->cg.id);
		return;
	}
	if (!c->o.allow_partial) {
		/* The command never ran a single instruction: it goes with us. */
		kill(c->o.pid, SIGKILL);
		waitpid(c->o.pid, NULL, 0);
		errx(1, "launch: %s; %s", why, partial_hint);
	}
	s->effective = "process";
	snprintf(s->reason, sizeof(s->reason),
		 "%s; profiling pid %d only, without its descendants (--allow-partial)", why,
		 (int)c->o.pid);
	warnx("launch: %s", s->reason);
}

void
scope_announce(struct collect *c)
{
	if (!c->scope.reason[0])
		return;
	char text[sizeof(c->scope.reason) + 16];
	snprintf(text, sizeof(text), "launch: %s", c->scope.reason);
	struct fr_warning w = { c->start_ns, str_of(text) };
	emit_warning(&c->out, &w);
}

int
scope_covers(const struct collect *c, uint32_t pid)
{
	return pid == (uint32_t)c->o.pid || c->scope.cgroup;
}

void
scope_known(struct collect *c, uint32_t pid)
{
	if (c->scope.cgroup && u32set_add(&c->scope.known, pid) < 0)
		errx(1, "out of memory");
}

void
scope_forked(struct collect *c, uint32_t pid, uint32_t ppid)
{
	if (ppid == (uint32_t)c->o.pid || u32set_has(&c->scope.known, ppid))
		scope_known(c, pid);
}

void
scope_gone(struct collect *c, uint32_t pid)
{
	if (pid != (uint32_t)c->o.pid)
		u32set_remove(&c->scope.known, pid);
}

void
scope_sample(struct collect *c, uint32_t pid)
{
	if (!c->scope.cgroup || pid == (uint32_t)c->o.pid || u32set_has(&c->scope.known, pid))
		return;
	/* Known from now on even if /proc no longer has it: one attempt per process. */
	scope_known(c, pid);
	synth_process(c, (pid_t)pid, collect_now());
}

void
scope_each_process(struct collect *c, void (*fn)(struct collect *c, pid_t pid))
{
	pid_t *procs;
	size_t n;
	if (!c->scope.cgroup)
		return;
	if (cgroup_procs(&c->scope.cg, &procs, &n) < 0) {
		warn("cannot list the processes of cgroup %s", c->scope.cg.path);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (procs[i] == c->o.pid)
			continue;
		scope_known(c, (uint32_t)procs[i]);
		fn(c, procs[i]);
	}
	free(procs);
}

void
scope_finish(struct collect *c, uint64_t time)
{
	char why[3 * PATH_MAX + 200], text[3 * PATH_MAX + 220];
	if (!c->scope.cgroup)
		return;
	size_t moved = 0;
	if (cgroup_remove(&c->scope.cg, &moved, why, sizeof(why)) == 0) {
		if (c->o.verbose)
			warnx("removed the launch cgroup, %zu process%s moved back to %s", moved,
			      moved == 1 ? "" : "es", c->scope.cg.origin);
	} else {
		snprintf(text, sizeof(text), "launch: %s", why);
		warnx("%s", text);
		struct fr_warning w = { time ? time - 1 : 0, str_of(text) };
		emit_warning(&c->out, &w);
	}
	u32set_free(&c->scope.known);
}
