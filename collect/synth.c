/*
 * Frames for what existed before the events were enabled: the target description, its
 * executable mappings and its threads' names.  Pre-existing state produces no perf records,
 * so without these the first samples could not be attributed.
 */
#include <err.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "collect.h"
#include "elfid.h"
#include "procfs.h"

void
collect_mapping(struct collect *c, struct fr_mmap *m, uint64_t end)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%.*s", (int)m->path.len, m->path.p);
	if (m->build_id_len == 0 && path[0] == '/') {
		int fd = procfs_open_mapping((pid_t)m->pid, m->start, end, path);
		if (fd >= 0) {
			int n = elfid_build_id(fd, m->build_id, sizeof(m->build_id));
			m->build_id_len = n > 0 ? (uint8_t)n : 0;
			close(fd);
		}
	}
	emit_mmap(&c->out, m);
	if (m->pid == (uint32_t)c->o.pid)
		fallback_map(&c->fb, m->start, end);
	char why[PATH_MAX + 200];
	int rc = path[0] == '/' && m->build_id_len ?
			 modcache_add(&c->cache, m->build_id, m->build_id_len, (pid_t)m->pid,
				      m->start, end, path, why, sizeof(why)) : 0;
	if (rc < 0)
		warnx("module cache: %s", why);
	if (rc == MODCACHE_FULL) {
		/* Once, in the window it happened in. */
		snprintf(why, sizeof(why), "module cache full: '%s' holds %llu bytes, "
			 "--max-module-cache %llu; the modules not copied are named from their "
			 "files while these last, and keep addresses only in a replay",
			 c->cache.dir, (unsigned long long)c->cache.bytes,
			 (unsigned long long)c->cache.max_bytes);
		warnx("%s", why);
		struct fr_warning w = { m->time, str_of(why) };
		emit_warning(&c->out, &w);
	}
}

struct synth_maps {
	struct collect *c;
	pid_t pid;
	uint64_t time;
};

static int
synth_map(const struct procmap *pm, void *arg)
{
	struct synth_maps *s = arg;
	if (!(pm->prot & PROT_EXEC))
		return 0;
	/* perf names anonymous executable memory (JIT code) this way too. */
	const char *path = pm->path[0] ? pm->path : "//anon";
	struct fr_mmap m = {
		.time = s->time, .pid = (uint32_t)s->pid, .tid = (uint32_t)s->pid,
		.start = pm->start, .len = pm->end - pm->start, .pgoff = pm->pgoff,
		.prot = pm->prot, .flags = pm->flags, .path = str_of(path),
	};
	collect_mapping(s->c, &m, pm->end);
	return 0;
}

/* quiet: the process may have ended meanwhile (another process of the launch cgroup). */
static void
synth_one(struct collect *c, pid_t pid, uint64_t time, int quiet)
{
	struct synth_maps s = { c, pid, time };
	if (procfs_maps(pid, synth_map, &s) < 0 && !quiet)
		warn("cannot read /proc/%d/maps", (int)pid);
	struct tidlist tids = { 0 };
	if (procfs_tasks(pid, &tids) < 0 && !quiet)
		warn("cannot list /proc/%d/task", (int)pid);
	for (size_t i = 0; i < tids.n; i++) {
		char comm[64];
		if (procfs_comm(pid, tids.v[i], comm, sizeof(comm)) < 0)
			continue; /* the thread has exited meanwhile */
		struct fr_comm fc = {
			.time = time, .pid = (uint32_t)pid, .tid = (uint32_t)tids.v[i],
			.comm = str_of(comm),
		};
		emit_comm(&c->out, &fc);
	}
	tidlist_free(&tids);
}

void
synth_if_new(struct collect *c, uint32_t pid)
{
	if (scope_first_sample(&c->scope, pid))
		synth_one(c, (pid_t)pid, collect_now(), 1);
}

static void
synth_other(void *arg, pid_t pid)
{
	synth_one(arg, pid, collect_now(), 1);
}

void
synth_existing(struct collect *c)
{
	synth_one(c, c->o.pid, collect_now(), 0);
	scope_each_process(&c->scope, synth_other, c);
}

void
synth_target(struct collect *c, uint64_t since)
{
	const struct unwind_choice *u = &c->unwind;
	char exe[PATH_MAX] = "", comm[64] = "";
	if (procfs_exe(c->o.pid, exe, sizeof(exe)) < 0)
		exe[0] = 0;
	if (procfs_comm(c->o.pid, c->o.pid, comm, sizeof(comm)) < 0)
		comm[0] = 0;
	struct fr_target t = {
		.pid = (uint32_t)c->o.pid,
		.cpu_frequency = c->o.freq,
		.start_time = c->run.start_ns,
		.kind = str_of(c->o.kind),
		.exe = str_of(exe),
		.comm = str_of(comm),
		.unwind_requested = str_of(c->o.unwind),
		.unwind_mode = str_of(u->mode),
		.unwind_reason = str_of(u->reason),
		.profiles = str_of(c->o.profiles),
		.flags = c->offcpu.prog ? TARGET_OFFCPU : 0,
		.kernel_release = str_of(c->run.release),
		.calib_samples = u->calib.samples,
		.calib_mapped_permille = u->calib.mapped_permille,
		.calib_deep_permille = u->calib.deep_permille,
		.calib_cycles = u->calib.cycles,
		.calib_verdict = str_of(u->calib.verdict ? u->calib.verdict : ""),
		.fallback_reason = str_of(u->fallback_reason),
		.since = since,
		.scope_requested = str_of(c->scope.requested ? c->scope.requested : ""),
		.scope_effective = str_of(c->scope.effective ? c->scope.effective : ""),
		.scope_cgroup = str_of(c->scope.cgroup ? c->scope.cg.path : ""),
		.scope_reason = str_of(c->scope.reason),
		.offcpu_percent = c->o.offcpu_percent ? c->o.offcpu_percent : 100,
		.window_nanos = c->o.window_ns,
	};
	emit_target(&c->out, &t);
}
