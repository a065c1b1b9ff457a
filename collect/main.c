/*
 * collect: the privileged first stage.
 *
 * Reads: the target process through /proc and perf events (CPU clock samples with kernel
 * and user frame-pointer callchains, mmap/comm/fork/exit records), and /proc/kallsyms.
 * Writes: the framed event stream on stdout (and --save-stream), and with --module-cache
 * copies of the target's executables keyed by build id.
 * Drops: records of processes other than the target (inherited events follow children).
 * Ends on --duration, SIGINT/SIGTERM or target exit with an END frame and status 0.
 */
#include <err.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "calib.h"
#include "collect.h"
#include "opts.h"
#include "preflight.h"

/* SIGINT/SIGTERM are read from a signalfd, so they must never be delivered; blocking them
 * before setup keeps an early Ctrl-C pending until the loop writes its END frame. */
static void
signals_setup(void)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		err(1, "sigprocmask");
	/* A closed stdout must be a write error we report, not a silent death. */
	signal(SIGPIPE, SIG_IGN);
}

static struct stream_header
make_header(int e_machine)
{
	struct timespec mono, real;
	struct stream_header h = { .version = STREAM_VERSION, .clockid = CLOCK_MONOTONIC,
				   .e_machine = (uint32_t)e_machine };
	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	h.clock_offset_ns = (real.tv_sec - mono.tv_sec) * 1000000000LL +
			    (real.tv_nsec - mono.tv_nsec);
	if (getrandom(&h.session_id, sizeof(h.session_id), 0) != sizeof(h.session_id))
		err(1, "getrandom");
	return h;
}

/* One fd per (thread, CPU) event, plus slack for /proc files and module copies. */
static void
raise_nofile(int nthreads, int ncpu)
{
	struct rlimit rl;
	rlim_t need = (rlim_t)nthreads * (rlim_t)ncpu * 2 + 256;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= need)
		return;
	if (rl.rlim_max < need)
		rl.rlim_max = need;
	rl.rlim_cur = need;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		warn("cannot raise the open file limit to %llu", (unsigned long long)need);
}

static int
open_pidfd(pid_t pid)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0)
		err(1, "preflight target: pidfd_open %d", (int)pid);
	return fd;
}

/* Read after attaching: kallsyms takes ~0.2 s to read, and the rings hold the samples of
 * that time while the target is already covered (and resumed, in launch mode). */
static void
load_ksyms(struct collect *c)
{
	if (ksyms_load(&c->ksyms, "/proc/kallsyms") < 0)
		warn("cannot read /proc/kallsyms; kernel frames stay unnamed");
	else if (c->ksyms.n == 0)
		warnx("/proc/kallsyms shows no addresses; kernel frames stay unnamed");
}

static void
refresh_preflight(struct collect *c)
{
	struct preflight pf;
	preflight_run(&c->o, &pf);
}

/* Opens the sampling events in the mode chosen and attaches to every thread. */
static void
open_events(struct collect *c, int dwarf, int nthreads)
{
	char why[256];
	if (perf_set_init(&c->perf, c->o.freq, dwarf, why, sizeof(why)) < 0)
		errx(1, "%s", why);
	raise_nofile(nthreads, c->perf.ncpu);
	collect_attach(c);
}

/* Without unwind tables DWARF has nothing to walk: fatal unless leaf-only is allowed. */
static void
need_tables(struct collect *c, const char *why)
{
	if (calib_has_unwind_tables(c->o.pid))
		return;
	if (!c->o.allow_partial)
		errx(1, "%s and the target has no unwind tables (.eh_frame or .debug_frame); "
		     "--allow-partial keeps leaf-only stacks", why);
	snprintf(c->reason + strlen(c->reason), sizeof(c->reason) - strlen(c->reason),
		 "; no unwind tables: leaf-only stacks (--allow-partial)");
}

/* --unwind auto: the frame-pointer calibration decides (the target runs meanwhile). */
static void
choose_mode(struct collect *c, int pidfd, int nthreads, int *resumed)
{
	static struct calib k;

	c->mode = strcmp(c->o.unwind, "dwarf") == 0 ? "dwarf" : "fp";
	if (strcmp(c->o.unwind, "auto") != 0) {
		snprintf(c->reason, sizeof(c->reason), "%s requested", c->mode);
		if (strcmp(c->mode, "dwarf") == 0)
			need_tables(c, "dwarf unwinding was requested");
		return;
	}
	open_events(c, 0, nthreads);
	if (c->o.launch_argv) {
		launch_resume(c->o.pid);
		*resumed = 1;
	}
	calib_run(c, pidfd, &k, refresh_preflight);
	perf_set_close(&c->perf);
	c->calib_samples = k.samples;
	c->calib_mapped = k.addrs ? (uint32_t)(k.mapped * 1000 / k.addrs) : 0;
	c->calib_deep = k.samples ? k.deep * 1000 / k.samples : 0;
	c->calib_cycles = k.cycles;
	c->calib_verdict = k.accepted ? "accepted" : "rejected";
	if (k.accepted) {
		snprintf(c->reason, sizeof(c->reason), "auto: frame pointers accepted: %s",
			 k.reason);
	} else {
		c->mode = "dwarf";
		snprintf(c->reason, sizeof(c->reason), "auto: frame pointers rejected: %s; "
			 "using DWARF", k.reason);
		need_tables(c, "frame pointers were rejected");
	}
	calib_free(&k);
}

int
main(int argc, char **argv)
{
	static struct collect c;
	struct preflight pf;
	int resumed = 0;

	opts_parse(argc, argv, &c.o);
	signals_setup();
	c.exit_status = -1;
	if (c.o.check && c.o.launch_argv)
		return 0;
	if (c.o.check) {
		preflight_run(&c.o, &pf);
		return 0;
	}
	if (c.o.launch_argv)
		c.o.pid = launch_start(c.o.launch_argv, c.o.launch_stdout_fd);
	preflight_run(&c.o, &pf);
	int pidfd = open_pidfd(c.o.pid);
	if (modcache_init(&c.cache, c.o.module_cache) < 0)
		err(1, "cannot create module cache '%s'", c.o.module_cache);

	choose_mode(&c, pidfd, pf.nthreads, &resumed);
	struct stream_header h = make_header(pf.e_machine);
	emit_open(&c.out, &h, c.o.save_stream);
	c.start_ns = collect_now();
	if (c.o.duration_ns)
		c.deadline_ns = c.start_ns + c.o.duration_ns;
	synth_target(&c, pf.release);

	open_events(&c, strcmp(c.mode, "dwarf") == 0, pf.nthreads);
	synth_existing(&c);
	emit_flush(&c.out);
	if (c.o.launch_argv && !resumed)
		launch_resume(c.o.pid);
	else if (c.o.resume && kill(c.o.pid, SIGCONT) < 0)
		warn("cannot resume pid %d", (int)c.o.pid);
	load_ksyms(&c);

	int reason = collect_loop(&c, pidfd);
	if (c.o.verbose)
		warnx("end reason %d: %llu samples written, %llu of other processes dropped",
		      reason, (unsigned long long)c.samples, (unsigned long long)c.dropped);
	emit_close(&c.out);
	perf_set_close(&c.perf);
	ksyms_free(&c.ksyms);
	modcache_free(&c.cache);
	close(pidfd);
	return 0;
}
