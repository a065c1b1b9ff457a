/*
 * Loading the off-CPU program and keeping the bookkeeping of its intervals.
 *
 * Intervals are cut at every drain: a thread that is still off the CPU when collect
 * writes FR_ROUND at time T is reported up to T (flag OFFCPU_CONTINUES) and the rest
 * follows later (OFFCPU_CONTINUED), so a round keeps its promise that nothing older
 * follows, and a long wait lands in the windows it spans.  The pieces are matched by
 * (tid, start): the "starts" map entry of one interval, which the program never rewrites.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bpflog.h"
#include "cpulist.h"
#include "kernver.h"
#include "offcpu.h"
#include "offcpu_blocked.h"
#include "offcpu.skel.h"
#include "offcpu_priv.h"

/* The BPF ring buffer needs Linux 5.8; 0 when the kernel is new enough. */
static int
kernel_too_old(char *why, size_t whylen)
{
	return kernel_below(5, 8, "off-cpu", " (BPF ring buffer)", why, whylen) ? -1 : 0;
}

static int
no_btf(const struct offcpu_config *cfg, char *why, size_t whylen)
{
	if (cfg->btf_path) {
		if (access(cfg->btf_path, R_OK) == 0)
			return 0;
		snprintf(why, whylen, "off-cpu: cannot read the BTF file '%s': %s", cfg->btf_path,
			 strerror(errno));
		return -1;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK) == 0)
		return 0;
	snprintf(why, whylen, "off-cpu: the kernel has no BTF (/sys/kernel/btf/vmlinux is "
		 "missing: CONFIG_DEBUG_INFO_BTF); --offcpu-btf FILE can supply it");
	return -1;
}

static void
reason(int rc, const char *step, char *why, size_t whylen)
{
	const char *msg = bpflog_last();
	snprintf(why, whylen, "off-cpu: cannot %s the sched_switch program: %s%s%s", step,
		 strerror(rc < 0 ? -rc : rc ? rc : EINVAL), msg[0] ? " (libbpf: " : "", msg);
	if (msg[0])
		snprintf(why + strlen(why), whylen - strlen(why), ")");
}

static struct offcpu *
fail(struct offcpu *o, int rc, const char *step, char *why, size_t whylen)
{
	reason(rc, step, why, whylen);
	offcpu_close(o);
	return NULL;
}

struct offcpu *
offcpu_open(pid_t pid, const struct offcpu_config *cfg, char *why, size_t whylen)
{
	if (kernel_too_old(why, whylen) < 0 || no_btf(cfg, why, whylen) < 0)
		return NULL;
	struct offcpu *o = calloc(1, sizeof(*o));
	if (!o) {
		snprintf(why, whylen, "out of memory");
		return NULL;
	}
	bpflog_reset(cfg->verbose);
	LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = cfg->btf_path);
	o->skel = offcpu_bpf__open_opts(&opts);
	if (!o->skel)
		return fail(o, -errno, "open", why, whylen);
	o->skel->rodata->min_ns = cfg->min_ns;
	o->skel->rodata->phases = cfg->phases;
	/* percent of 2^32; 100 (or an unset 0) records every switch-out. */
	o->skel->rodata->keep_below =
		cfg->percent && cfg->percent < 100 ? (__u32)(((uint64_t)cfg->percent << 32) / 100) : 0;
	/* pid 0 (the probe of collect --check --launch, before there is a command) must not
	 * select the idle tasks, whose tgid is 0: all ones matches no process. */
	o->skel->rodata->target_tgid = cfg->cgroup_id ? 0 : pid > 0 ? (__u32)pid : ~0u;
	o->skel->rodata->target_cgroup = cfg->cgroup_id;
	o->skel->rodata->cpu_filter = cfg->cpus != NULL;
	/* Woken at half full: the regular drains keep up below that. */
	o->skel->rodata->wakeup_bytes = cfg->ring_bytes / 2;
	o->blocked = offcpu_blocked_wanted(cfg->recording);
	bpf_program__set_autoload(o->skel->progs.offcpu_blocked, o->blocked);
	bpf_program__set_autoattach(o->skel->progs.offcpu_blocked, false);
	int rc = bpf_map__set_max_entries(o->skel->maps.events, (__u32)cfg->ring_bytes);
	if (rc == 0)
		rc = offcpu_bpf__load(o->skel);
	if (rc)
		return fail(o, rc, "load", why, whylen);
	__u32 key = pid > 0 ? (__u32)pid : ~0u;
	__u8 one = 1;
	if (bpf_map_update_elem(bpf_map__fd(o->skel->maps.targets), &key, &one, BPF_ANY))
		return fail(o, -errno, "configure", why, whylen);
	for (__u32 c = 0; cfg->cpus && c < OFFCPU_MAX_CPUS; c++)
		if (cpulist_has(cfg->cpus, (int)c) &&
		    bpf_map_update_elem(bpf_map__fd(o->skel->maps.cpus), &c, &one, BPF_ANY))
			return fail(o, -errno, "configure", why, whylen);
	o->pid = pid;
	o->cgroup = cfg->cgroup_id != 0;
	o->rb = ring_buffer__new(bpf_map__fd(o->skel->maps.events), offcpu_ring_event, o, NULL);
	if (!o->rb)
		return fail(o, -errno, "read the ring buffer of", why, whylen);
	o->starts_fd = bpf_map__fd(o->skel->maps.starts);
	o->deep_fd = bpf_map__fd(o->skel->maps.deep);
	o->stacks_fd = bpf_map__fd(o->skel->maps.stacks);
	o->ustacks_fd = bpf_map__fd(o->skel->maps.ustacks);
	o->counters_fd = bpf_map__fd(o->skel->maps.counters);
	o->min_ns = cfg->min_ns;
	o->before = cfg->before;
	o->own_frames = cfg->own_frames;
	o->arg = cfg->arg;
	o->ncpu = libbpf_num_possible_cpus();
	if (o->ncpu <= 0)
		return fail(o, o->ncpu, "count the CPUs for", why, whylen);
	return o;
}

int
offcpu_begin(struct offcpu *o, uint64_t start_ns, uint64_t deadline_ns, char *why,
	     size_t whylen)
{
	o->deadline_ns = deadline_ns;
	if (!o->blocked)
		return 0;
	return offcpu_blocked_snapshot(o->skel, o->pid, o->cgroup, start_ns, why, whylen);
}

int
offcpu_attach(struct offcpu *o, char *why, size_t whylen)
{
	int rc = offcpu_bpf__attach(o->skel);
	if (rc) {
		reason(rc, "attach", why, whylen);
		return -1;
	}
	if (!o->blocked)
		return 0;
	/* Taken once attached: a thread that blocks from here on has its switch-out. */
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	return offcpu_blocked_open(o->skel, o->pid, o->cgroup, now, why, whylen);
}

int
offcpu_fd(const struct offcpu *o)
{
	return bpf_map__fd(o->skel->maps.events);
}

void
offcpu_close(struct offcpu *o)
{
	if (!o)
		return;
	ring_buffer__free(o->rb);
	offcpu_bpf__destroy(o->skel);
	for (size_t i = 0; i < OFFCPU_STACK_SLOTS + OFFCPU_USTACK_SLOTS; i++)
		free(o->stacks[i]);
	batch_release(&o->batches);
	free(o->open[0].slots);
	free(o->open[1].slots);
	free(o);
}
