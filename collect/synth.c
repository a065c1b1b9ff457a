/*
 * Frames for what existed before the events were enabled: the target description, its
 * executable mappings and its threads' names.  Pre-existing state produces no perf records,
 * so without these the first samples could not be attributed.
 */
#include <err.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "collect.h"
#include "elfid.h"
#include "host.h"
#include "procfs.h"
#include "vdso.h"

/* The build id from the ELF file when the kernel gave none. */
static void
fill_build_id(struct fr_mmap *m, const char *path, uint64_t end)
{
	if (m->build_id_len || path[0] != '/')
		return;
	int fd = procfs_open_mapping((pid_t)m->pid, m->start, end, path);
	if (fd >= 0) {
		int n = elfid_build_id(fd, m->build_id, sizeof(m->build_id));
		m->build_id_len = n > 0 ? (uint8_t)n : 0;
		close(fd);
	}
}

void
collect_mapping(struct collect *c, struct fr_mmap *m, uint64_t end)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%.*s", (int)m->path.len, m->path.p);
	if (m->build_id_len == 0 && vdso_mapping(m))
		vdso_file(&c->cache, m, end);
	fill_build_id(m, path, end);
	emit_mmap(&c->out, m);
	jitcopy_mapping(&c->jit, m, path);
	if (m->pid == (uint32_t)c->o.pid)
		fallback_map(&c->fb, m->start, end);
	char why[PATH_MAX + 200];
	int rc = path[0] == '/' && m->build_id_len ?
			 modcache_add(&c->cache, m->build_id, m->build_id_len, (pid_t)m->pid,
				      m->start, end, path, why, sizeof(why)) : 0;
	/* Host-wide, processes end while their maps are read: counted, told at the end. */
	if (rc < 0 && c->o.host && !c->o.verbose)
		c->run.modules_unread++;
	else if (rc < 0)
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

void
collect_comm(struct collect *c, const struct fr_comm *m)
{
	emit_comm(&c->out, m);
	names_set(&c->names, m->tid, m->comm.p, m->comm.len, m->time);
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

static int
snap_map(const struct procmap *pm, void *arg)
{
	struct collect *c = arg;
	struct snapshot *s = &c->snap;
	if (!(pm->prot & PROT_EXEC))
		return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 32;
		void *v = realloc(s->v, cap * sizeof(*s->v));
		if (!v)
			errx(1, "out of memory");
		s->v = v;
		s->cap = cap;
	}
	struct snap_map *e = &s->v[s->n++];
	snprintf(e->path, sizeof(e->path), "%s", pm->path[0] ? pm->path : "//anon");
	e->m = (struct fr_mmap){
		.pid = (uint32_t)c->o.pid, .tid = (uint32_t)c->o.pid, .start = pm->start,
		.len = pm->end - pm->start, .pgoff = pm->pgoff, .prot = pm->prot,
		.flags = pm->flags,
	};
	fill_build_id(&e->m, e->path, pm->end);
	char why[PATH_MAX + 200];
	/* Copied now: the target may be gone when the stream can name it. */
	if (e->m.build_id_len && e->path[0] == '/' &&
	    modcache_add(&c->cache, e->m.build_id, e->m.build_id_len, c->o.pid, pm->start,
			 pm->end, e->path, why, sizeof(why)) < 0)
		warnx("module cache: %s", why);
	return 0;
}

void
synth_snapshot(struct collect *c)
{
	struct snapshot *s = &c->snap;
	s->n = 0;
	s->valid = 1;
	if (procfs_exe(c->o.pid, s->exe, sizeof(s->exe)) < 0)
		s->exe[0] = 0;
	if (procfs_comm(c->o.pid, c->o.pid, s->comm, sizeof(s->comm)) < 0)
		s->comm[0] = 0;
	(void)procfs_maps(c->o.pid, snap_map, c);
}

void
synth_snapshot_done(struct collect *c)
{
	c->snap.valid = 0;
}

/* The target's image as the calibration began. */
static void
synth_from_snapshot(struct collect *c, uint64_t time)
{
	for (size_t i = 0; i < c->snap.n; i++) {
		struct snap_map *e = &c->snap.v[i];
		e->m.time = time;
		e->m.path = str_of(e->path);
		collect_mapping(c, &e->m, e->m.start + e->m.len);
	}
}

/* quiet: the process may have ended meanwhile (another process of the launch cgroup). */
static void
synth_one(struct collect *c, pid_t pid, uint64_t time, int quiet)
{
	struct synth_maps s = { c, pid, time };
	if (pid == c->o.pid && c->snap.valid)
		synth_from_snapshot(c, time);
	else if (procfs_maps(pid, synth_map, &s) < 0 && !quiet)
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
		collect_comm(c, &fc);
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

/* --host: every process there is, each quietly (it may end while it is read). */
static void
synth_host(struct collect *c)
{
	size_t over = host_each_process(synth_other, c);
	if (!over)
		return;
	char text[200];
	snprintf(text, sizeof(text), "host: more than %d processes at the start: %zu were not "
		 "read from /proc, and their samples keep addresses only", HOST_MAX_PROCESSES,
		 over);
	warnx("%s", text);
	struct fr_warning w = { collect_now(), str_of(text) };
	emit_warning(&c->out, &w);
}

void
synth_existing(struct collect *c)
{
	if (c->scope.host) {
		synth_host(c);
		return;
	}
	/* A target that exited during the calibration may have no /proc left; a container's
	 * init process may end at any time (its restart is followed). */
	synth_one(c, c->o.pid, collect_now(), c->run.end_reason == END_TARGET_EXIT ||
		  (c->ctr.kind && kill(c->o.pid, 0) < 0));
	scope_each_process(&c->scope, synth_other, c);
}

void
synth_target(struct collect *c, uint64_t since)
{
	const struct unwind_choice *u = &c->unwind;
	char exe[PATH_MAX] = "", comm[64] = "";
	if (c->snap.valid) {
		snprintf(exe, sizeof(exe), "%s", c->snap.exe);
		snprintf(comm, sizeof(comm), "%s", c->snap.comm);
	} else if (!c->o.host) {
		if (procfs_exe(c->o.pid, exe, sizeof(exe)) < 0)
			exe[0] = 0;
		if (procfs_comm(c->o.pid, c->o.pid, comm, sizeof(comm)) < 0)
			comm[0] = 0;
	}
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
		.flags = (c->offcpu.prog ? TARGET_OFFCPU : 0) | (c->heap.prog ? TARGET_HEAP : 0) |
			 (c->physical.prog ? TARGET_PHYSICAL : 0),
		.physical_percent = c->physical.prog ? c->o.physical_percent : 0,
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
		.container_runtime = str_of(c->ctr.runtime),
		.container_id = str_of(c->ctr.id),
		.container_name = str_of(c->ctr.name),
		.container_started_at = str_of(c->ctr.started_at),
		.k8s_namespace = str_of(c->ctr.ns),
		.k8s_pod_name = str_of(c->ctr.pod),
		.k8s_pod_uid = str_of(c->ctr.pod_uid),
		.cpu_event = str_of(c->ev.name ? c->ev.name : ""),
		.cpu_event_reason = str_of(c->ev.reason),
		.cpu_list = str_of(c->o.cpuid.text),
	};
	const struct heap_probe *hp = &c->heap.probe;
	if (c->o.heap) {
		t.alloc_interval = c->o.alloc_interval;
		t.allocator_requested = str_of(c->o.allocator);
		t.allocator_detected = str_of(hp->detected ? hp->detected : "");
		t.allocator_module = str_of(hp->module);
		t.allocator_complete = (uint32_t)hp->complete;
		t.allocator_reason = str_of(hp->detected ? "" : hp->reason);
		t.heap_scope = str_of("process");
	}
	emit_target(&c->out, &t);
}
