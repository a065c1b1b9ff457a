/*
 * The live loop: epoll on the rings, the target's pidfd, a signalfd for SIGINT/SIGTERM and
 * a timerfd for --duration.  Every wakeup (or 100 ms without one) drains all rings and ends
 * with FR_ROUND, which lets later stages release events older than the round's time.  After
 * each drain the loop acts on what the deciders say: an exec that is due (exec.c) or auto's
 * switch to DWARF (fallback.c), each through the one reopen sequence (reopen.c).
 */
#include <err.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "collect.h"
#include "launch.h"
#include "preflight.h"

#define IDLE_DRAIN_MS 100       /* quiet rings are still drained this often */
#define ROUND_SLACK_NS 1000000  /* records stamped just before a drain may land after it */

#define TAG_RING LOOP_TAG_RING
#define TAG_PIDFD LOOP_TAG_PIDFD
#define TAG_SIGNAL LOOP_TAG_SIGNAL
#define TAG_TIMER LOOP_TAG_TIMER

static void
watch(int ep, int fd, uint32_t events, int tag)
{
	struct epoll_event ev = { .events = events, .data.u64 = (uint64_t)tag };
	if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) < 0)
		err(1, "epoll_ctl");
}

/* Edge-triggered: a ring whose owning thread exited reports EPOLLHUP forever.  Closed
 * rings leave the epoll set by themselves. */
static void
watch_rings(struct collect *c, int ep)
{
	for (size_t i = 0; i < c->perf.nrings; i++)
		watch(ep, c->perf.rings[i].fd, EPOLLIN | EPOLLET, TAG_RING);
}

/* The heap ring is watched anew when its probes restart with a new program (a new fd). */
static void
watch_heap(struct collect *c, int ep)
{
	if (c->heap.prog && heap_fd(c->heap.prog) != c->heap.watched_fd) {
		c->heap.watched_fd = heap_fd(c->heap.prog);
		watch(ep, c->heap.watched_fd, EPOLLIN | EPOLLET, TAG_RING);
	}
}

/* The same for the physical memory collector, which a container's restart opens anew. */
static void
watch_physical(struct collect *c, int ep)
{
	if (c->physical.prog && physical_fd(c->physical.prog) != c->physical.watched_fd) {
		c->physical.watched_fd = physical_fd(c->physical.prog);
		watch(ep, c->physical.watched_fd, EPOLLIN | EPOLLET, TAG_RING);
	}
}

static void
drain(struct collect *c)
{
	uint64_t t0 = collect_now();
	/* Before the samples: a function is in its runtime's files before it runs. */
	jitcopy_sync(&c->jit, t0, 0);
	for (size_t i = 0; i < c->perf.nrings; i++)
		perf_ring_read(&c->perf, &c->perf.rings[i], records_handle, c, 1);
	uint64_t bad = c->rec.malformed + c->perf.malformed;
	if (bad) {
		struct fr_lost l = { .time = t0, .count = bad, .kind = LOST_MALFORMED };
		emit_lost(&c->out, &l);
		c->rec.malformed = c->perf.malformed = 0;
	}
	struct fr_round r = { t0 > ROUND_SLACK_NS ? t0 - ROUND_SLACK_NS : 0 };
	/* The recording covers [start, deadline): nothing at or past the deadline follows. */
	if (c->run.deadline_ns && r.time >= c->run.deadline_ns)
		r.time = c->run.deadline_ns - 1;
	procend_check(&c->procend, t0, &c->out, &c->scope);
	jitcopy_before_sample(&c->jit); /* a mapping of this pass, before the stacks below */
	collect_offcpu_drain(&c->offcpu, &c->out, &r.time);
	collect_heap_drain(&c->heap, &c->out, t0);
	collect_physical_drain(&c->physical, &c->out, t0);
	if (lifecycle_drain(&c->lifecycle))
		exec_check_soon(&c->exec);
	/* Before the round, so a failed window's warning is still inside it. */
	fallback_round(&c->fb, &c->out, r.time);
	emit_round(&c->out, &r);
	emit_flush(&c->out);
}

static int
open_timer(uint64_t ns)
{
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (fd < 0)
		err(1, "timerfd_create");
	struct itimerspec it = { .it_value = { (time_t)(ns / 1000000000u),
					       (long)(ns % 1000000000u) } };
	/* Absolute: the deadline counts from the start time in FR_TARGET, not from here. */
	if (timerfd_settime(fd, TFD_TIMER_ABSTIME, &it, NULL) < 0)
		err(1, "timerfd_settime");
	return fd;
}

/* Sets up the watched fds; SIGINT and SIGTERM are already blocked by main. */
static int
loop_setup(struct collect *c, int pidfd, int *sfd, int *tfd)
{
	int ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		err(1, "epoll_create1");
	watch_rings(c, ep);
	if (pidfd >= 0) /* --host has no target */
		watch(ep, pidfd, EPOLLIN, TAG_PIDFD);
	/* Edge-triggered: the program wakes us only when its ring buffer is filling. */
	if (c->offcpu.prog)
		watch(ep, offcpu_fd(c->offcpu.prog), EPOLLIN | EPOLLET, TAG_RING);
	watch_heap(c, ep);
	watch_physical(c, ep);
	if (lifecycle_fd(&c->lifecycle) >= 0)
		watch(ep, lifecycle_fd(&c->lifecycle), EPOLLIN | EPOLLET, TAG_RING);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	if ((*sfd = signalfd(-1, &set, SFD_CLOEXEC)) < 0)
		err(1, "signalfd");
	watch(ep, *sfd, EPOLLIN, TAG_SIGNAL);
	*tfd = -1;
	if (c->o.duration_ns) {
		*tfd = open_timer(c->run.deadline_ns);
		watch(ep, *tfd, EPOLLIN, TAG_TIMER);
	}
	return ep;
}

static int
wait_reason(int ep)
{
	struct epoll_event ev[32];
	int n = epoll_wait(ep, ev, 32, IDLE_DRAIN_MS), reason = 0;
	if (n < 0 && errno != EINTR)
		err(1, "epoll_wait");
	for (int i = 0; i < n; i++) {
		int tag = (int)ev[i].data.u64, r = 0;
		if (tag == TAG_PIDFD)
			r = END_TARGET_EXIT;
		else if (tag == TAG_SIGNAL)
			r = END_SIGNAL;
		else if (tag == TAG_TIMER)
			r = END_DURATION;
		if (r && (!reason || r == END_TARGET_EXIT))
			reason = r;
	}
	return reason;
}

/* The target executed a new image at `at` (exec.c): the recording of the old one ends there,
 * the preflight runs again and the mode is chosen again for the new image, whose events and
 * windows start at the exec.  0, or the end reason when the recording ended during a new
 * calibration (whose samples are written all the same). */
static int
on_exec(struct collect *c, int pidfd, int ep, uint64_t at)
{
	struct preflight pf;
	int resumed = 1;

	if (c->o.verbose)
		warnx("the target executed a new image: choosing the unwind mode again");
	collect_heap_exec(c, at);
	/* The calibration for the new image opens events of its own. */
	perf_set_close(&c->perf);
	fallback_exec(&c->fb);
	preflight_run(&c->o, &pf);
	snprintf(c->run.release, sizeof(c->run.release), "%s", pf.release);
	exec_identity(&c->exec, c->o.pid);
	c->run.end_reason = mode_choose(c, pidfd, pf.nthreads, &resumed);
	/* The calibration may have seen another exec: the image is the one now running. */
	exec_identity(&c->exec, c->o.pid);
	/* Before reopen: the calibration's samples are judged from the exec on. */
	fallback_arm(&c->fb, c->o.unwind, &c->unwind, at);
	reopen(c, 0, pf.nthreads);
	watch_rings(c, ep);
	collect_heap_restart(c, HEAP_RESET_EXEC, at);
	watch_heap(c, ep);
	return c->run.end_reason;
}

/* A frame-pointer window failed and the target has unwind tables (fallback.c): DWARF from
 * the next window on, for the rest of the recording. */
static void
on_fallback(struct collect *c, int ep)
{
	uint64_t since;
	const char *why;
	if (!fallback_decide(&c->fb, &since, &why))
		return;
	int nthreads = c->perf.ncpu > 0 ? (int)(c->perf.nrings / (size_t)c->perf.ncpu) : 1;
	mode_fallback(&c->unwind, why);
	reopen(c, since, nthreads + 16);
	watch_rings(c, ep);
	collect_heap_restart(c, HEAP_RESET_REATTACH, 0);
	watch_heap(c, ep);
}

/* The first window's warnings of what runs with less than was asked for. */
static void
announce(struct collect *c)
{
	uint64_t t = c->run.start_ns;
	scope_announce(&c->scope, &c->out, t);
	collect_offcpu_announce(&c->offcpu, &c->out, t);
	collect_heap_announce(&c->heap, &c->out, t);
	collect_physical_announce(&c->physical, &c->out, t);
	if (!c->o.host) /* no target whose exec and exit it would watch */
		lifecycle_announce(&c->lifecycle, &c->out, t);
}

int
collect_loop(struct collect *c, int pidfd)
{
	int sfd, tfd;
	int ep = loop_setup(c, pidfd, &sfd, &tfd);
	/* The first calibration may have seen the end already. */
	int reason = c->run.end_reason;
	exec_check_after(&c->exec, collect_now());
	announce(c);
	for (;;) {
		while (!reason) {
			reason = wait_reason(ep);
			drain(c);
			uint64_t at = reason ? 0 : exec_due(&c->exec, &c->out, c->o.pid,
							    collect_now());
			if (at)
				reason = on_exec(c, pidfd, ep, at);
			if (!reason)
				on_fallback(c, ep);
		}
		/* A container's init process ended: the same container may start again. */
		if (reason != END_TARGET_EXIT || !c->ctr.kind)
			break;
		drain(c);
		reason = follow_restart(c, ep, sfd, &pidfd);
		if (!reason) {
			watch_rings(c, ep);
			if (c->offcpu.prog)
				watch(ep, offcpu_fd(c->offcpu.prog), EPOLLIN | EPOLLET, TAG_RING);
			watch_physical(c, ep);
			if (lifecycle_fd(&c->lifecycle) >= 0)
				watch(ep, lifecycle_fd(&c->lifecycle), EPOLLIN | EPOLLET, TAG_RING);
			exec_check_after(&c->exec, collect_now());
			continue;
		}
		c->run.exit_written = 1; /* follow_restart wrote the target's exit */
		break;
	}
	/* The final drain: the exit and last samples are in the rings by now. */
	jitcopy_sync(&c->jit, collect_now(), 1);
	drain(c);
	uint64_t now = collect_now();
	if (reason == END_DURATION)
		now = c->run.deadline_ns;
	/* What the programs hold goes out now; they are detached once the stream has ended
	 * (finish, main.c). */
	collect_offcpu_last(&c->offcpu, &c->out, now);
	collect_heap_last(&c->heap, &c->out, now);
	collect_physical_last(&c->physical, &c->out, now);
	if (reason == END_TARGET_EXIT && !c->run.exit_written) {
		if (c->o.launch_argv)
			c->run.exit_status = launch_reap(c->o.pid);
		struct fr_target_exit te = { now, (uint32_t)c->o.pid, c->run.exit_status };
		emit_target_exit(&c->out, &te);
	}
	scope_finish(&c->scope, &c->out, now, c->o.verbose);
	struct fr_end end = { now, (uint32_t)reason };
	emit_end(&c->out, &end);
	emit_flush(&c->out);
	close(ep);
	close(sfd);
	if (pidfd >= 0)
		close(pidfd);
	if (tfd >= 0)
		close(tfd);
	return reason;
}
