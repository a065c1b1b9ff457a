/* The state collect's modules share: options, the target and the outputs. */
#ifndef COLLECT_COLLECT_H
#define COLLECT_COLLECT_H

#include <stdint.h>
#include <sys/types.h>

#include "emit.h"
#include "fallback.h"
#include "ksyms.h"
#include "modcache.h"
#include "perf.h"
#include "procend.h"
#include "scope.h"

struct collect_opts {
	pid_t pid;
	uint64_t duration_ns;           /* 0: no deadline */
	unsigned freq;
	const char *unwind;             /* "auto" or "fp" */
	const char *kind;               /* "pid" or "launch" */
	int resume;
	const char *module_cache;
	uint64_t max_module_cache;      /* --max-module-cache: bytes the cache may hold */
	unsigned max_threads;
	const char *save_stream;
	int verbose;
	char **launch_argv;             /* --launch -- CMD...: run it, attach before it starts */
	int launch_stdout_fd;           /* the command's stdout (-1: its stderr) */
	int launch_stderr_fd;           /* the command's stderr (-1: collect's) */
	int check;                      /* --check: options and preflight only, then exit */
	int allow_partial;              /* leaf-only stacks when no unwind tables exist */
	uint64_t window_ns;             /* the windows the fallback judges (as aggregate's) */
	const char *profiles;           /* --profiles as given, duplicates removed */
	int offcpu;                     /* off-cpu requested */
	int no_cpu;                     /* cpu not requested: samples are not written */
	unsigned offcpu_phases;         /* OFFCPU_WANT_* (bpf/offcpu_shared.h) */
	uint64_t offcpu_min_ns;         /* --offcpu-min-duration-us */
	uint64_t offcpu_ring_bytes;     /* --offcpu-ring-buffer */
	unsigned offcpu_percent;        /* --offcpu-probability, 1..100 */
	const char *offcpu_btf;         /* --offcpu-btf */
};

struct collect {
	struct collect_opts o;
	struct emit out;
	struct perf_set perf;
	struct ksyms ksyms;
	struct modcache cache;
	uint64_t start_ns;              /* CLOCK_MONOTONIC at start */
	uint64_t deadline_ns;           /* start + --duration; 0 without one */
	int exit_status;                /* launched command's wait status, -1 unknown */
	uint64_t malformed;             /* records that failed to parse, not yet reported */
	uint64_t samples, dropped;      /* for -v */
	struct fr_sample sample;        /* scratch: too big for the stack of every call */
	struct fr_sample_regs sregs;    /* the same, in DWARF mode */
	const char *mode;               /* the unwind mode in effect: "fp" or "dwarf" */
	char reason[320];               /* why that mode */
	struct calib *calib;            /* while calibrating: samples go here, not out */
	int calib_exec;                 /* the calibration saw the target exec */
	uint32_t calib_samples, calib_mapped, calib_deep, calib_cycles;
	const char *calib_verdict;      /* NULL when no calibration ran */
	int recording;                  /* the stream has started: calibration ends softly */
	char release[65];               /* the kernel release of the last preflight */
	uint64_t exe_dev, exe_ino;      /* identity of the target's executable */
	uint64_t next_exe_check;        /* when to compare that identity again */
	uint64_t exec_time;             /* a COMM exec of the target not yet handled, or 0 */
	struct offcpu *offcpu;          /* the off-CPU collector, NULL when not running */
	char offcpu_why[320];           /* why off-cpu was dropped (--allow-partial) */
	struct lifecycle *lifecycle;    /* the lifecycle program, NULL when not running */
	char lifecycle_why[320];        /* why it is not */
	uint64_t session_id;            /* the stream's, chosen before the launch cgroup */
	struct scope scope;             /* the processes covered (scope.h) */
	struct procend procend;         /* which exits end a process (procend.h) */
	struct fallback fb;             /* auto's watch over frame-pointer windows */
	char fallback_reason[256];      /* why auto left frame pointers, or empty */
	uint64_t since;                 /* the time the next FR_TARGET applies from, or 0 */
};

uint64_t collect_now(void);             /* CLOCK_MONOTONIC ns */
/* Sends the mapping on (build id from the ELF file when the kernel gave none) and files it
 * in the module cache. */
void collect_mapping(struct collect *c, struct fr_mmap *m, uint64_t end);

/* records.c: one perf record into frames (arg is the struct collect). */
void records_handle(void *arg, const struct perf_event_header *h);
/* FR_KSYM for each of the kernel ips not named yet (also for off-CPU stacks). */
void send_ksyms(struct collect *c, const uint64_t *ips, size_t n);

/* synth.c: FR_TARGET, then FR_MMAP and FR_COMM for what exists already. */
void synth_target(struct collect *c, const char *release);
void synth_existing(struct collect *c);
/* FR_MMAP and FR_COMM of one process from /proc (another process of the launch cgroup). */
void synth_process(struct collect *c, pid_t pid, uint64_t time);

/* attach.c: opens the events of every thread of the target (fatal on failure). */
void collect_attach(struct collect *c);

/* launch.c: starts argv stopped right after its exec; returns its pid. */
pid_t launch_start(char **argv, int stdout_fd, int stderr_fd);
/* Lets the stopped command run. */
void launch_resume(pid_t pid);
/* The command's exit status once it ended (reaps it), -1 if unknown. */
int launch_reap(pid_t pid);

/* main.c: chooses the unwind mode (for auto, runs the calibration with its own events);
 * sets *resumed when it let a launched command run.  0, or the end reason when the
 * recording had started and ended during the calibration. */
int collect_choose_mode(struct collect *c, int pidfd, int nthreads, int *resumed);
/* Opens the sampling events in the mode chosen and attaches to every thread. */
void collect_open_events(struct collect *c, int dwarf, int nthreads);

/* exec.c: remembers the identity of the target's executable (/proc/PID/exe). */
void exec_identity(struct collect *c);
/* 1 when the identity changed since exec_identity(). */
int exec_identity_changed(struct collect *c);
/* Writes the warning of an exec at time; synth_comm: no COMM exec record came, so one
 * is written first. */
void exec_warn(struct collect *c, uint64_t time, int synth_comm);
/* After exec_warn (events still open): runs the preflight again, chooses the unwind mode
 * again, writes a new FR_TARGET and reopens the events.  0, or the end reason when the
 * recording ended during a new calibration. */
int exec_handle(struct collect *c, int pidfd);

/* loop.c: runs until the end condition, writes the last frames; returns the end reason. */
int collect_loop(struct collect *c, int pidfd);

#endif
