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
#include "collect.h"
#include "lifecycle.skel.h"
#include "lifecycle_shared.h"

_Static_assert(sizeof(struct lifecycle_event) % 8 == 0, "ring records stay 8-byte aligned");

struct lifecycle {
	struct lifecycle_bpf *skel;
	struct ring_buffer *rb;
	struct collect *c;
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
		if (e->pid == (uint32_t)l->c->o.pid)
			l->c->next_exe_check = 0;
		break;
	case LIFECYCLE_FORK:
		l->forks++;
		break;
	case LIFECYCLE_EXIT:
		l->exits++;
		break;
	}
	if (l->c->o.verbose)
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
open_program(struct collect *c, char *why, size_t whylen)
{
	if (too_old(why, whylen) < 0)
		return NULL;
	struct lifecycle *l = calloc(1, sizeof(*l));
	if (!l) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	l->c = c;
	const char *step = "open";
	int rc;
	bpflog_reset(c->o.verbose);
	LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = c->o.offcpu_btf);
	l->skel = lifecycle_bpf__open_opts(&opts);
	if (!l->skel) {
		rc = -errno;
		goto fail;
	}
	l->skel->rodata->target_tgid = (__u32)c->o.pid;
	l->skel->rodata->target_cgroup = c->scope.cgroup ? c->scope.cg.id : 0;
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
lifecycle_start(struct collect *c)
{
	c->lifecycle = open_program(c, c->lifecycle_why, sizeof(c->lifecycle_why));
	if (c->o.verbose)
		warnx("lifecycle: %s%s", c->lifecycle ? "eBPF" : "procfs every 1 s: ",
		      c->lifecycle ? "" : c->lifecycle_why);
}

void
lifecycle_announce(struct collect *c)
{
	if (c->lifecycle)
		return;
	char text[400];
	int n = snprintf(text, sizeof(text), "lifecycle eBPF unavailable (%s): exec and exit "
			 "are reconciled from /proc once a second", c->lifecycle_why);
	struct fr_warning w = { c->start_ns, { text, (uint16_t)(n < (int)sizeof(text) ? n :
							 (int)sizeof(text) - 1) } };
	emit_warning(&c->out, &w);
}

int
lifecycle_fd(const struct collect *c)
{
	return c->lifecycle ? bpf_map__fd(c->lifecycle->skel->maps.events) : -1;
}

void
lifecycle_drain(struct collect *c)
{
	if (c->lifecycle && ring_buffer__consume(c->lifecycle->rb) < 0)
		warnx("lifecycle: cannot read the ring buffer");
}

void
lifecycle_end(struct collect *c)
{
	struct lifecycle *l = c->lifecycle;
	if (!l)
		return;
	if (c->o.verbose)
		warnx("lifecycle: %llu execs, %llu forks, %llu exits seen",
		      (unsigned long long)l->execs, (unsigned long long)l->forks,
		      (unsigned long long)l->exits);
	ring_buffer__free(l->rb);
	lifecycle_bpf__destroy(l->skel);
	free(l);
	c->lifecycle = NULL;
}
