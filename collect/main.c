/*
 * collect: the privileged first stage.
 *
 * Reads: the target process through /proc and perf events (CPU clock samples with kernel
 * and user frame-pointer callchains, mmap/comm/fork/exit records), and /proc/kallsyms.
 * Writes: the framed event stream on stdout (and --save-stream), and with --module-cache
 * copies of the target's executables keyed by build id.
 * Drops: records of processes other than the target (inherited events follow children),
 * except in a cgroup scope, which keeps every process of the cgroup: launch's own, or a
 * container's (--docker-container, --k8s-pod: resolved through its API, ctarget.h; its
 * restarts are followed, follow.c).
 * --host keeps every process of the machine, sampled by CPU (host.h).
 * Ends on --duration, SIGINT/SIGTERM or target exit with an END frame and status 0.
 * Non-dumpable from the start; after setup it keeps only the capabilities its loop still
 * uses, with no-new-privs (privdrop.c).
 */
#include <err.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "collect.h"
#include "confine.h"
#include "launch.h"
#include "preflight.h"
#include "privdrop.h"
#include "tracefs.h"

/* SIGINT/SIGTERM are read from a signalfd, so they must never be delivered; blocking them
 * before setup keeps an early Ctrl-C pending until the loop writes its END frame. */
static void
signals_setup(void)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	/* Inherited as ignored (a driver's background job), they would still be stopped here:
	 * a blocked signal is never ignored, but put the default back all the same. */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		err(1, "sigprocmask");
	/* A closed stdout must be a write error we report, not a silent death. */
	signal(SIGPIPE, SIG_IGN);
}

static struct stream_header
make_header(int e_machine, uint64_t session_id)
{
	struct timespec mono, real;
	struct stream_header h = { .version = STREAM_VERSION, .clockid = CLOCK_MONOTONIC,
				   .e_machine = (uint32_t)e_machine };
	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	h.clock_offset_ns = (real.tv_sec - mono.tv_sec) * 1000000000LL +
			    (real.tv_nsec - mono.tv_nsec);
	h.session_id = session_id;
	return h;
}

static int
open_pidfd(pid_t pid)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0)
		err(1, "preflight target: pidfd_open %d", (int)pid);
	return fd;
}

/* Before anything else a recording (or its check) needs. */
static void
need_tracefs(int verbose)
{
	char why[300];
	int mounted;
	if (tracefs_ensure(&mounted, why, sizeof(why)) < 0)
		errx(1, "%s", why);
	if (mounted && verbose)
		warnx("mounted tracefs at %s", TRACEFS_DIR);
}

/* The module cache, and the copies of the JIT runtimes' symbol files it holds. */
static void
open_cache(struct collect *c)
{
	if (modcache_init(&c->cache, c->o.module_cache, c->o.max_module_cache,
			  c->run.session_id, c->o.pid) < 0)
		err(1, "cannot create module cache '%s'", c->o.module_cache);
	jitcopy_init(&c->jit, &c->cache, &c->out, c->run.session_id);
}

/* The stream has ended: the pipe closes, so that the next stage sees its end now rather
 * than at collect's exit (fd 1 stays taken, by /dev/null). */
static void
release_stdout(void)
{
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
		close(STDOUT_FILENO);
	if (fd > STDOUT_FILENO)
		close(fd);
}

/* The recording ended with reason: what is still to say, and everything closed. */
static void
finish(struct collect *c, int reason)
{
	if (c->o.verbose)
		warnx("end reason %d: %llu samples written, %llu of other processes dropped",
		      reason, (unsigned long long)c->rec.samples,
		      (unsigned long long)c->rec.dropped);
	if (c->o.verbose && c->rec.top.cut_samples)
		warnx("%llu stack copies cut at their process's start_stack: %llu bytes not "
		      "written", (unsigned long long)c->rec.top.cut_samples,
		      (unsigned long long)c->rec.top.cut_bytes);
	if (c->run.modules_unread)
		warnx("host: %llu modules of processes that ended or could not be read were not "
		      "copied to the module cache (-v names them)",
		      (unsigned long long)c->run.modules_unread);
	emit_close(&c->out);
	release_stdout();
	/* Detaching the programs waits on the kernel (a second and more for the heap probes):
	 * the stages downstream publish the last window meanwhile. */
	collect_offcpu_stop(&c->offcpu);
	collect_heap_stop(&c->heap);
	collect_physical_stop(&c->physical);
	lifecycle_end(&c->lifecycle);
	perf_set_close(&c->perf);
	ksyms_free(&c->ksyms);
	fallback_free(&c->fb);
	jitcopy_free(&c->jit);
	modcache_free(&c->cache);
	procend_free(&c->procend);
	names_free(&c->names);
	stacktop_free(&c->rec.top);
	free(c->snap.v);
}

/* --check: the options and the probes of each profile, without recording; the preflight of
 * the target (pf) unless a command would be launched. */
static int
check_only(struct collect *c, struct preflight *pf)
{
	if (pf)
		preflight_run(&c->o, pf);
	else
		scope_check(c->o.allow_partial);
	evsource_choose(&c->ev, c->o.freq, c->o.no_cpu, c->o.require_hw);
	collect_offcpu_probe(c);
	collect_heap_probe(c);
	collect_physical_probe(c);
	/* The driver's question before it picks the stages' user (docs/privileges.md), asked
	 * here rather than of one more process. */
	if (c->o.landlock_abi && printf("%d\n", rp_landlock_abi()) < 0)
		err(1, "stdout");
	return 0;
}

int
main(int argc, char **argv)
{
	static struct collect c;
	struct preflight pf;
	int resumed = 0;

	opts_parse(argc, argv, &c.o);
	privdrop_nondumpable();
	signals_setup();
	c.run.exit_status = -1;
	/* Not root: the preflight says so first. */
	if (geteuid() == 0)
		need_tracefs(c.o.verbose);
	if (c.o.check && c.o.launch_argv)
		return check_only(&c, NULL);
	if (c.o.docker || c.o.k8s_pod)
		follow_resolve(&c);
	if (c.o.check)
		return check_only(&c, &pf);
	if (c.o.launch_argv)
		c.o.pid = launch_start(c.o.launch_argv, c.o.launch_stdout_fd,
				       c.o.launch_stderr_fd);
	scope_init(&c.scope, c.o.pid);
	if (c.ctr.kind)
		scope_container(&c.scope, c.ctr.pid, c.ctr.cgroup);
	if (c.o.host)
		scope_host(&c.scope);
	preflight_run(&c.o, &pf);
	evsource_choose(&c.ev, c.o.freq, c.o.no_cpu, c.o.require_hw);
	int pidfd = c.o.host ? -1 : open_pidfd(c.o.pid); /* --host: no target to end it */
	/* The launch cgroup is named after the session. */
	if (getrandom(&c.run.session_id, sizeof(c.run.session_id), 0) !=
	    sizeof(c.run.session_id))
		err(1, "getrandom");
	if (c.o.launch_argv)
		scope_launch(&c.scope, c.run.session_id, c.o.allow_partial, c.o.verbose);
	open_cache(&c);

	collect_offcpu_load(&c);
	collect_heap_probe(&c);
	collect_physical_probe(&c);
	/* The recording starts here: auto's calibration is part of it (calib.h). */
	c.run.start_ns = collect_now();
	if (c.o.duration_ns)
		c.run.deadline_ns = c.run.start_ns + c.o.duration_ns;
	collect_offcpu_begin(&c);
	c.run.end_reason = mode_choose(&c, pidfd, pf.nthreads, &resumed);
	exec_identity(&c.exec, c.o.pid);
	struct stream_header h = make_header(pf.e_machine, c.run.session_id);
	emit_open(&c.out, &h, c.o.save_stream);
	c.run.started = 1;
	snprintf(c.run.release, sizeof(c.run.release), "%s", pf.release);
	collect_offcpu_start(&c);
	collect_heap_start(&c);
	collect_physical_start(&c);
	if (!c.o.host)
		lifecycle_start(&c.lifecycle, c.o.pid, scope_cgroup_id(&c.scope), c.o.verbose);
	fallback_init(&c.fb, c.o.pid, c.o.window_ns, c.o.verbose);
	/* --host: no window of one target to judge (mode.c). */
	fallback_arm(&c.fb, c.o.host ? "host" : c.o.unwind, &c.unwind, c.run.start_ns);
	reopen(&c, 0, pf.nthreads);
	if (c.o.launch_argv && !resumed)
		launch_resume(c.o.pid);
	else if (c.o.resume && kill(c.o.pid, SIGCONT) < 0)
		warn("cannot resume pid %d", (int)c.o.pid);
	collect_ksyms(&c);
	/* Setup is over: what the loop still needs stays (privdrop.c). */
	privdrop_keep_needed(c.o.verbose);

	finish(&c, collect_loop(&c, pidfd));
	return 0;
}
