/*
 * Attaching to every thread of the target.  Threads are listed, each gets its events, and
 * the list is read again until it holds no thread we have not handled: a thread created
 * between the listing and the opening of its creator's events would otherwise be missed.
 *
 * A new thread created after its creator's events existed already carries inherited
 * events; opening more for it would count its samples twice.  Such a thread announced
 * itself with a FORK record in our rings (emitted by the creator's inherited-from event),
 * so the rings are searched, without consuming, before opening events for a newcomer.
 *
 * --max-threads bounds this per-thread backend: events are opened for at most that many
 * threads (each costs one event and file per CPU); the threads past it are left out, with a
 * warning, and so are the threads they create.  The preflight's own limit is separate.
 */
#include <err.h>
#include <stdio.h>
#include <string.h>

#include "attach.h"
#include "clock.h"
#include "procfs.h"

#define ATTACH_ROUNDS 1000      /* a target spawning threads faster than we list them */

struct fork_scan {
	pid_t pid;
	struct tidlist *covered;
};

static void
fork_seen(void *arg, const struct perf_event_header *h)
{
	struct fork_scan *s = arg;
	uint32_t pid, tid;
	if (h->type != PERF_RECORD_FORK || h->size < 24)
		return;
	memcpy(&pid, (const uint8_t *)h + 8, 4);
	memcpy(&tid, (const uint8_t *)h + 16, 4);
	if (pid == (uint32_t)s->pid && !tidlist_has(s->covered, (pid_t)tid) &&
	    tidlist_add(s->covered, (pid_t)tid) < 0)
		errx(1, "out of memory");
}

static void
scan_forks(struct perf_set *p, pid_t pid, struct tidlist *covered)
{
	struct fork_scan s = { pid, covered };
	for (size_t i = 0; i < p->nrings; i++)
		perf_ring_read(p, &p->rings[i], fork_seen, &s, 0);
}

/* One pass: opens events for every listed thread not handled yet, up to --max-threads
 * opened in all (*opened); the others are handled as left out (*skipped).  Returns how many
 * threads were new. */
static size_t
attach_pass(struct perf_set *p, const struct attach_spec *a, struct tidlist *done,
	    const struct tidlist *now, int first, size_t *opened, size_t *skipped)
{
	size_t fresh = 0;
	char why[256];
	if (!first)
		scan_forks(p, a->pid, done);
	for (size_t i = 0; i < now->n; i++) {
		pid_t tid = now->v[i];
		if (tidlist_has(done, tid))
			continue;
		fresh++;
		if (*opened >= a->max_threads) {
			(*skipped)++;
		} else {
			int rc = perf_set_add(p, tid, why, sizeof(why));
			if (rc < 0)
				errx(1, "%s", why);
			*opened += (size_t)rc;
		}
		if (tidlist_add(done, tid) < 0)
			errx(1, "out of memory");
	}
	return fresh;
}

/* The threads --max-threads left out: a line on stderr (once a run) and, once the stream
 * started, a warning in the window. */
static void
warn_left_out(const struct attach_spec *a, size_t opened, size_t skipped)
{
	static int told;
	char text[200];

	snprintf(text, sizeof(text), "--max-threads %u: perf events opened for %zu of the "
		 "target's %zu threads; %zu not sampled", a->max_threads, opened,
		 opened + skipped, skipped);
	if (!told || a->verbose)
		warnx("%s", text);
	told = 1;
	if (a->out) {
		struct fr_warning w = { collect_now(), str_of(text) };
		emit_warning(a->out, &w);
	}
}

void
attach(struct perf_set *p, const struct attach_spec *a)
{
	struct tidlist done = { 0 }, now = { 0 };
	int round;
	char why[256];

	if (a->cpus) {
		/* Without the CPU profile the events only follow mappings, names and threads.
		 * Events bound to the target's threads or cgroup are switched in and out with
		 * them, which costs every context switch of the target even when nothing fires
		 * (about a tenth of a pipe ping-pong's rate: bench/offcpu.sh); events on the CPUs
		 * never are.  They see every process, and the records are filtered by scope.
		 * --host samples on them too: every task of the machine, by CPU. */
		if (perf_set_add_cpus(p, why, sizeof(why)) < 0)
			errx(1, "%s", why);
		return;
	}
	if (a->cgroup_fd >= 0) {
		/* The cgroup covers every task in it, present and future: no listing. */
		if (perf_set_add_cgroup(p, a->cgroup_fd, why, sizeof(why)) < 0)
			errx(1, "%s", why);
		if (a->verbose)
			warnx("attached to cgroup %s with %zu events", a->cgroup_path, p->nfds);
		return;
	}
	size_t opened = 0, skipped = 0;
	for (round = 0; round < ATTACH_ROUNDS; round++) {
		if (procfs_tasks(a->pid, &now) < 0)
			err(1, "cannot list the threads of pid %d", (int)a->pid);
		if (attach_pass(p, a, &done, &now, round == 0, &opened, &skipped) == 0)
			break;
	}
	if (skipped)
		warn_left_out(a, opened, skipped);
	if (a->verbose)
		warnx("attached to %zu threads with %zu events in %zu rings (%s) after %d scans",
		      done.n, p->nfds, p->nrings, p->shared ? "shared per cpu" : "one per event",
		      round + 1);
	tidlist_free(&done);
	tidlist_free(&now);
}
