/*
 * The live loop: epoll on the rings, the target's pidfd, a signalfd for SIGINT/SIGTERM and
 * a timerfd for --duration.  Every wakeup (or 100 ms without one) drains all rings and ends
 * with FR_ROUND, which lets later stages release events older than the round's time.
 */
#include <err.h>
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "collect.h"
#include "lifecycle.h"
#include "offcpu.h"

#define IDLE_DRAIN_MS 100       /* quiet rings are still drained this often */
#define ROUND_SLACK_NS 1000000  /* records stamped just before a drain may land after it */
#define EXE_CHECK_NS 1000000000ull /* how often the executable identity is compared */

enum { TAG_RING, TAG_PIDFD, TAG_SIGNAL, TAG_TIMER };

uint64_t
collect_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

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

static void
drain(struct collect *c)
{
	uint64_t t0 = collect_now();
	for (size_t i = 0; i < c->perf.nrings; i++)
		perf_ring_read(&c->perf, &c->perf.rings[i], records_handle, c, 1);
	uint64_t bad = c->malformed + c->perf.malformed;
	if (bad) {
		struct fr_lost l = { .time = t0, .count = bad, .kind = LOST_MALFORMED };
		emit_lost(&c->out, &l);
		c->malformed = c->perf.malformed = 0;
	}
	struct fr_round r = { t0 > ROUND_SLACK_NS ? t0 - ROUND_SLACK_NS : 0 };
	/* The recording covers [start, deadline): nothing at or past the deadline follows. */
	if (c->deadline_ns && r.time >= c->deadline_ns)
		r.time = c->deadline_ns - 1;
	procend_check(c, t0);
	collect_offcpu_drain(c, &r.time);
	lifecycle_drain(c);
	/* Before the round, so a failed window's warning is still inside it. */
	fallback_round(c, r.time);
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
	watch(ep, pidfd, EPOLLIN, TAG_PIDFD);
	/* Edge-triggered: the program wakes us only when its ring buffer is filling. */
	if (c->offcpu)
		watch(ep, offcpu_fd(c->offcpu), EPOLLIN | EPOLLET, TAG_RING);
	if (lifecycle_fd(c) >= 0)
		watch(ep, lifecycle_fd(c), EPOLLIN | EPOLLET, TAG_RING);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	if ((*sfd = signalfd(-1, &set, SFD_CLOEXEC)) < 0)
		err(1, "signalfd");
	watch(ep, *sfd, EPOLLIN, TAG_SIGNAL);
	*tfd = -1;
	if (c->o.duration_ns) {
		*tfd = open_timer(c->deadline_ns);
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

/* An exec of the target, seen in a COMM record or as a new executable identity, reopens
 * the events for the new image (exec.c). */
static int
check_exec(struct collect *c, int pidfd, int ep)
{
	uint64_t now = collect_now(), at = c->exec_time;
	int end;

	if (!c->exec_time && now >= c->next_exe_check) {
		c->next_exe_check = now + EXE_CHECK_NS;
		if (!exec_identity_changed(c))
			return 0;
		/* The COMM record was missed: the exec is stamped when it was noticed. */
		exec_warn(c, now, 1);
		at = now;
	} else if (!c->exec_time) {
		return 0;
	}
	c->exec_time = 0;
	if ((end = exec_handle(c, pidfd)) != 0)
		return end;
	c->exec_time = 0; /* records of the old rings are gone with them */
	/* The windows of the later stages restart at the exec. */
	fallback_arm(c, at);
	watch_rings(c, ep);
	return 0;
}

int
collect_loop(struct collect *c, int pidfd)
{
	int sfd, tfd;
	int ep = loop_setup(c, pidfd, &sfd, &tfd);
	int reason = 0;
	c->next_exe_check = collect_now() + EXE_CHECK_NS;
	collect_offcpu_announce(c);
	lifecycle_announce(c);
	while (!reason) {
		reason = wait_reason(ep);
		drain(c);
		if (!reason)
			reason = check_exec(c, pidfd, ep);
		if (!reason && c->fb.pending && fallback_switch(c))
			watch_rings(c, ep);
	}
	/* The final drain: the exit and last samples are in the rings by now. */
	drain(c);
	uint64_t now = collect_now();
	if (reason == END_DURATION)
		now = c->deadline_ns;
	collect_offcpu_end(c, now);
	lifecycle_end(c);
	if (reason == END_TARGET_EXIT) {
		if (c->o.launch_argv)
			c->exit_status = launch_reap(c->o.pid);
		struct fr_target_exit te = { now, (uint32_t)c->o.pid, c->exit_status };
		emit_target_exit(&c->out, &te);
	}
	scope_finish(c, now);
	struct fr_end end = { now, (uint32_t)reason };
	emit_end(&c->out, &end);
	emit_flush(&c->out);
	close(ep);
	close(sfd);
	if (tfd >= 0)
		close(tfd);
	return reason;
}
