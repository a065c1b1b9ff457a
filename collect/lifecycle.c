#include "lifecycle.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <err.h>
#include <errno.h>
#include <linux/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "bpflog.h"
#include "tracefs.h"
#include "lifecycle.skel.h"
#include "lifecycle_shared.h"

_Static_assert(sizeof(struct lifecycle_event) % 8 == 0, "ring records stay 8-byte aligned");

struct lifecycle {
	struct lifecycle_bpf *skel;
	struct ring_buffer *rb;
	uint32_t pid;
	int verbose;
	int target_exec;        /* an exec of the target since the last drain */
	uint64_t execs, forks, exits, malformed;
};

static int
on_event(void *ctx, void *data, size_t len)
{
	struct lifecycle *l = ctx;
	const struct lifecycle_event *e = data;
	if (len < sizeof(*e)) {
		l->malformed++;
		return 0;
	}
	switch (e->kind) {
	case LIFECYCLE_EXEC:
		l->execs++;
		/* The loop compares the executable's identity right after this drain. */
		l->target_exec |= e->pid == l->pid;
		break;
	case LIFECYCLE_FORK:
		l->forks++;
		break;
	case LIFECYCLE_EXIT:
		l->exits++;
		break;
	}
	if (l->verbose)
		warnx("lifecycle: %s of pid %u (tid %u, parent %u)", e->kind == LIFECYCLE_EXEC ?
		      "exec" : e->kind == LIFECYCLE_FORK ? "fork" : "exit", e->pid, e->tid,
		      e->ppid);
	return 0;
}

static int
too_old(char *why, size_t whylen)
{
	struct utsname u;
	unsigned major = 0, minor = 0;
	if (uname(&u) < 0 || sscanf(u.release, "%u.%u", &major, &minor) != 2 ||
	    major > 5 || (major == 5 && minor >= 8))
		return 0;
	snprintf(why, whylen, "Linux %s is older than 5.8", u.release);
	return -1;
}

static struct lifecycle *
open_program(pid_t pid, uint64_t cgroup_id, int verbose, char *why, size_t whylen)
{
	if (too_old(why, whylen) < 0)
		return NULL;
	struct lifecycle *l = calloc(1, sizeof(*l));
	if (!l) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	l->pid = (uint32_t)pid;
	l->verbose = verbose;
	const char *step = "open";
	int rc;
	bpflog_reset(verbose);
	l->skel = lifecycle_bpf__open();
	if (!l->skel) {
		rc = -errno;
		goto fail;
	}
	l->skel->rodata->target_tgid = (__u32)pid;
	l->skel->rodata->target_cgroup = cgroup_id;
	int dead = tracefs_event_field_offset("sched/sched_process_exit", "group_dead");
	l->skel->rodata->group_dead_offset = dead > 0 ? (__u32)dead : 0;
	step = "load";
	if ((rc = lifecycle_bpf__load(l->skel)) != 0)
		goto fail;
	step = "attach";
	if ((rc = lifecycle_bpf__attach(l->skel)) != 0)
		goto fail;
	l->rb = ring_buffer__new(bpf_map__fd(l->skel->maps.events), on_event, l, NULL);
	if (!l->rb) {
		rc = -errno;
		goto fail;
	}
	return l;
fail:
	snprintf(why, whylen, "cannot %s the lifecycle program: %s%s%s%s", step,
		 strerror(rc < 0 ? -rc : rc ? rc : EINVAL), bpflog_last()[0] ? " (libbpf: " : "",
		 bpflog_last(), bpflog_last()[0] ? ")" : "");
	ring_buffer__free(l->rb);
	lifecycle_bpf__destroy(l->skel);
	free(l);
	return NULL;
}

void
lifecycle_start(struct lifecycle_run *r, pid_t pid, uint64_t cgroup_id, int verbose)
{
	r->prog = open_program(pid, cgroup_id, verbose, r->why, sizeof(r->why));
	if (verbose)
		warnx("lifecycle: %s%s", r->prog ? "eBPF" : "procfs every 1 s: ",
		      r->prog ? "" : r->why);
}

void
lifecycle_announce(const struct lifecycle_run *r, struct emit *out, uint64_t time)
{
	if (r->prog)
		return;
	char text[400];
	int n = snprintf(text, sizeof(text), "lifecycle eBPF unavailable (%s): exec and exit "
			 "are reconciled from /proc once a second", r->why);
	struct fr_warning w = { time, { text, (uint16_t)(n < (int)sizeof(text) ? n :
							 (int)sizeof(text) - 1) } };
	emit_warning(out, &w);
}

int
lifecycle_fd(const struct lifecycle_run *r)
{
	return r->prog ? bpf_map__fd(r->prog->skel->maps.events) : -1;
}

int
lifecycle_drain(struct lifecycle_run *r)
{
	struct lifecycle *l = r->prog;
	if (!l)
		return 0;
	if (ring_buffer__consume(l->rb) < 0)
		warnx("lifecycle: cannot read the ring buffer");
	int exec = l->target_exec;
	l->target_exec = 0;
	return exec;
}

void
lifecycle_end(struct lifecycle_run *r)
{
	struct lifecycle *l = r->prog;
	if (!l)
		return;
	if (l->verbose)
		warnx("lifecycle: %llu execs, %llu forks, %llu exits seen",
		      (unsigned long long)l->execs, (unsigned long long)l->forks,
		      (unsigned long long)l->exits);
	ring_buffer__free(l->rb);
	lifecycle_bpf__destroy(l->skel);
	free(l);
	r->prog = NULL;
}
