/*
 * Container targets in the recording (manual: "Target lifecycle, signals, and partial
 * mode").  At the start the selector is resolved to the container's init process and its
 * cgroup, whose processes and threads the CPU and off-CPU collectors cover (scope.h).  When
 * the init process ends, the window in progress ends there (FR_TARGET_EXIT) and the API is
 * asked every FOLLOW_POLL_MS, for the container's fixed identity, until it runs again, is
 * gone, or the recording ends (signal, --duration).  A restart gets new events, eBPF
 * programs bound to the new cgroup and a new FR_TARGET with the new pid and start time; the
 * windows after it belong to the same session.
 */
#include <err.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "collect.h"
#include "preflight.h"

#define FOLLOW_POLL_MS 250

void
follow_resolve(struct collect *c)
{
	char why[PATH_MAX + 600];
	struct ctr_selector sel = { .kind = c->o.docker ? CTR_DOCKER : CTR_K8S,
				    .docker = c->o.docker, .pod = c->o.k8s_pod,
				    .container = c->o.container };
	if (ctr_resolve(&sel, &c->ctr, why, sizeof(why)) < 0)
		errx(1, "%s", why);
	c->o.pid = c->ctr.pid;
	if (c->o.verbose)
		warnx("%s container %s (%s) pid %d, cgroup %s", c->ctr.runtime, c->ctr.name,
		      c->ctr.id, (int)c->ctr.pid, c->ctr.cgroup);
}

static void
warning(struct collect *c, uint64_t t, const char *text)
{
	struct fr_warning w = { t, str_of(text) };
	emit_warning(&c->out, &w);
}

/* The old process's collectors go: its events, the eBPF programs bound to its cgroup. */
static void
stop_collectors(struct collect *c, int ep, int *pidfd, uint64_t now)
{
	collect_offcpu_end(&c->offcpu, &c->out, now);
	collect_physical_end(&c->physical, &c->out, now);
	lifecycle_end(&c->lifecycle);
	perf_set_close(&c->perf);
	epoll_ctl(ep, EPOLL_CTL_DEL, *pidfd, NULL);
	close(*pidfd);
	*pidfd = -1;
	struct fr_target_exit te = { now, (uint32_t)c->o.pid, -1 };
	emit_target_exit(&c->out, &te);
}

/* A signal or the deadline while waiting: its end reason, else 0. */
static int
wait_tick(struct collect *c, int ep, int sfd)
{
	struct epoll_event ev[8];
	int n = epoll_wait(ep, ev, 8, FOLLOW_POLL_MS);
	if (n < 0 && errno != EINTR)
		err(1, "epoll_wait");
	uint64_t now = collect_now();
	struct signalfd_siginfo si;
	for (int i = 0; i < n; i++)
		if (ev[i].data.u64 == LOOP_TAG_SIGNAL && read(sfd, &si, sizeof(si)) == sizeof(si))
			return END_SIGNAL;
	if (c->run.deadline_ns && now >= c->run.deadline_ns)
		return END_DURATION;
	/* Nothing happens, but the windows of the wait are published on time. */
	struct fr_round r = { now > 1000000 ? now - 1000000 : 0 };
	emit_round(&c->out, &r);
	emit_flush(&c->out);
	return 0;
}

/* The new incarnation is recorded like the first one was. */
static int
start_again(struct collect *c, int ep, int *pidfd)
{
	struct preflight pf;
	int resumed = 1;
	char text[PATH_MAX + 400];

	c->o.pid = c->ctr.pid;
	scope_container(&c->scope, c->ctr.pid, c->ctr.cgroup);
	c->fb.pid = c->cache.target = c->ctr.pid;
	*pidfd = (int)syscall(SYS_pidfd_open, c->ctr.pid, 0);
	if (*pidfd < 0)
		return END_TARGET_EXIT; /* gone at once: the caller asks again */
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = LOOP_TAG_PIDFD };
	if (epoll_ctl(ep, EPOLL_CTL_ADD, *pidfd, &ev) < 0)
		err(1, "epoll_ctl");
	uint64_t now = collect_now();
	snprintf(text, sizeof(text), "%s container %s restarted: pid %d, started at %s", c->ctr.runtime,
		 c->ctr.name, (int)c->ctr.pid, c->ctr.started_at);
	warning(c, now, text);
	preflight_run(&c->o, &pf);
	exec_identity(&c->exec, c->o.pid);
	collect_offcpu_load(c);
	collect_offcpu_begin(c);
	int end = mode_choose(c, *pidfd, pf.nthreads, &resumed);
	exec_identity(&c->exec, c->o.pid);
	collect_offcpu_start(c);
	collect_physical_start(c);
	lifecycle_start(&c->lifecycle, c->o.pid, scope_cgroup_id(&c->scope), c->o.verbose);
	fallback_arm(&c->fb, c->o.unwind, &c->unwind, now);
	c->run.end_reason = end;
	reopen(c, 0, pf.nthreads);
	return end;
}

int
follow_restart(struct collect *c, int ep, int sfd, int *pidfd)
{
	char why[PATH_MAX + 600];
	int said = 0;

	stop_collectors(c, ep, pidfd, collect_now());
	for (;;) {
		int end = wait_tick(c, ep, sfd);
		if (end)
			return end;
		pid_t old = c->o.pid;
		enum ctr_state st = ctr_follow(&c->ctr, old, why, sizeof(why));
		if (st == CTR_GONE) {
			warning(c, collect_now(), why);
			if (c->o.verbose)
				warnx("%s", why);
			return END_TARGET_EXIT;
		}
		if (st == CTR_DOWN) {
			/* An API failure (a bound exceeded, say) is kept trying, and reported. */
			if (why[0] && !said++) {
				char text[sizeof(why) + 300];
				snprintf(text, sizeof(text), "waiting for container %s: %s",
					 c->ctr.name, why);
				warnx("%s", text);
				warning(c, collect_now(), text);
			}
			continue;
		}
		end = start_again(c, ep, pidfd);
		if (end != END_TARGET_EXIT)
			return end;
		/* It ended again during the calibration: wait for the next start. */
		if (*pidfd >= 0)
			stop_collectors(c, ep, pidfd, collect_now());
	}
}
