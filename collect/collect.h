/*
 * The rooms of collect put together.  Each concern keeps its state in a struct of its own
 * and its file sees only that struct and what it is handed (opts.h, emit.h, perf.h and
 * attach.h, mode.h and calib.h, fallback.h, exec.h, offcpu.h, lifecycle.h, scope.h,
 * procend.h); the files that tie them together see struct collect: main.c (setup), loop.c
 * (the live loop, which acts on what the deciders return), reopen.c (the one sequence that
 * (re)opens the events), records.c (perf records into frames) and synth.c (the frames of
 * what exists already and of the target).
 */
#ifndef COLLECT_COLLECT_H
#define COLLECT_COLLECT_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "clock.h"
#include "ctarget.h"
#include "emit.h"
#include "evsource.h"
#include "exec.h"
#include "fallback.h"
#include "heap.h"
#include "jitcopy.h"
#include "ksyms.h"
#include "lifecycle.h"
#include "modcache.h"
#include "mode.h"
#include "names.h"
#include "offcpu.h"
#include "opts.h"
#include "perf.h"
#include "physical.h"
#include "procend.h"
#include "scope.h"
#include "stacktop.h"

/* The recording as a whole: set up by main, read by every part. */
struct recording {
	uint64_t start_ns;              /* CLOCK_MONOTONIC at start */
	uint64_t deadline_ns;           /* start + --duration; 0 without one */
	uint64_t session_id;            /* the stream's, chosen before the launch cgroup */
	int started;                    /* the stream has started */
	int end_reason;                 /* the recording ended during a calibration: why */
	int exit_status;                /* launched command's wait status, -1 unknown */
	char release[65];               /* the kernel release of the last preflight */
	int exit_written;               /* a container's last exit is in the stream already */
	uint64_t modules_unread;        /* --host: modules not copied (their process ended) */
};

/* The records of a calibration, whole, for the stream once the mode is chosen. */
struct kept {
	uint8_t *buf;                   /* records one after the other, 8-byte aligned */
	size_t len, cap;
	uint64_t lost;                  /* records beyond KEPT_MAX_BYTES */
};

/* records.c's own: scratch frames, counters, and where samples go while calibrating. */
struct records {
	uint64_t malformed;             /* records that failed to parse, not yet reported */
	uint64_t samples, dropped;      /* for -v */
	struct calib *calib;            /* while calibrating: what the records show goes here */
	struct kept kept;               /* ... and the records themselves here */
	struct fr_sample sample;        /* scratch: too big for the stack of every call */
	struct fr_sample_regs sregs;    /* the same, in DWARF mode */
	struct stacktop top;            /* DWARF mode: where main threads' stacks begin */
};

/* synth.c's own: the target as a calibration began (its executable, name and executable
 * mappings), which the calibration's records are written against: by then the target may
 * have executed another image, or be gone. */
struct snapshot {
	int valid;                      /* from synth_snapshot until the records are written */
	char exe[PATH_MAX], comm[64];
	struct snap_map {
		struct fr_mmap m;
		char path[PATH_MAX];
	} *v;
	size_t n, cap;
};

struct collect {
	struct collect_opts o;          /* read-only once parsed */
	struct recording run;
	struct emit out;                /* the stream */
	struct perf_set perf;           /* the sampling events */
	struct records rec;
	struct ksyms ksyms;
	struct modcache cache;
	struct jitcopy jit;             /* the JIT runtimes' symbol files, into the cache */
	struct unwind_choice unwind;    /* the mode in effect and why */
	struct fallback fb;             /* auto's watch over frame-pointer windows */
	struct exec_watch exec;         /* the target's image */
	struct offcpu_run offcpu;
	struct heap_run heap;
	struct physical_run physical;
	struct lifecycle_run lifecycle;
	struct scope scope;             /* the processes covered */
	struct procend procend;         /* which exits end a process */
	struct names names;             /* what each thread is called */
	struct snapshot snap;
	struct ctr_identity ctr;        /* a container target (kind CTR_NONE otherwise) */
	struct evsource ev;             /* the cpu profile's event: cycles or the CPU clock */
};

/* The tags of the live loop's epoll set (loop.c, follow.c). */
enum { LOOP_TAG_RING, LOOP_TAG_PIDFD, LOOP_TAG_SIGNAL, LOOP_TAG_TIMER };

/* records.c: one perf record into frames (arg is the struct collect). */
void records_handle(void *arg, const struct perf_event_header *h);
/* The records a calibration kept, into the stream in the mode chosen (c->unwind), then
 * freed; nothing when none are kept. */
void records_replay(struct collect *c);
/* FR_KSYM for each of the kernel ips not named yet (also for off-CPU stacks). */
void send_ksyms(struct ksyms *k, struct emit *out, const uint64_t *ips, size_t n);

/* synth.c: FR_TARGET, applying from since (0: at once; the fallback: its next window). */
void synth_target(struct collect *c, uint64_t since);
/* Remembers the target as it is (and copies its modules): a calibration begins, and its
 * records are written later, when the target may run another image or be gone.  Until
 * synth_snapshot_done, FR_TARGET and the target's mappings describe it as remembered. */
void synth_snapshot(struct collect *c);
/* The calibration's records are written: the target is described as it is from now on. */
void synth_snapshot_done(struct collect *c);
/* FR_MMAP and FR_COMM for what exists already: the target, and launch's cgroup. */
void synth_existing(struct collect *c);
/* Before pid's first sample or off-CPU interval: another process of the launch cgroup the
 * stream knows nothing about gets its FR_MMAP and FR_COMM from /proc. */
void synth_if_new(struct collect *c, uint32_t pid);
/* Sends the mapping on (build id from the ELF file when the kernel gave none) and files it
 * in the module cache. */
void collect_mapping(struct collect *c, struct fr_mmap *m, uint64_t end);
/* Sends the name on and remembers it for the tasks the thread creates. */
void collect_comm(struct collect *c, const struct fr_comm *m);

/* main.c: reads /proc/kallsyms once, before the first sample goes out. */
void collect_ksyms(struct collect *c);

/* reopen.c: opens the sampling events with a layout (PERF_*) and attaches them to the
 * target. */
void events_open(struct collect *c, int layout, int nthreads);
/* The one sequence of every change of the events, at the start, after an exec and for
 * auto's fallback: writes FR_TARGET for c->unwind (applying from since); after a
 * calibration, what exists already and the calibration's records in that mode; closes the
 * events (if open) and, unless the recording ended during the calibration
 * (c->run.end_reason), opens them in that mode and writes what exists already. */
void reopen(struct collect *c, uint64_t since, int nthreads);

/* loop.c: runs until the end condition, writes the last frames; returns the end reason.
 * Closes pidfd (a container target's restarts replace it). */
int collect_loop(struct collect *c, int pidfd);

/* follow.c: a container target resolved (exits with the reason when it cannot be); its
 * init process becomes c->o.pid. */
void follow_resolve(struct collect *c);
/* The init process of a container target ended (pidfd, watched in ep): its collectors
 * stop and the container's API is asked until it runs again (0: recording again, *pidfd
 * the new process's) or an end reason: gone (END_TARGET_EXIT, its exit written), a signal
 * read from sfd, the deadline. */
int follow_restart(struct collect *c, int ep, int sfd, int *pidfd);

#endif
