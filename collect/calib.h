/*
 * The frame-pointer calibration of --unwind auto (manual: "Unwinding and automatic
 * fallback"): for up to ten seconds and until 64 samples, frame-pointer callchains of the
 * target are checked against its executable mappings.  FP is accepted only with at least 64
 * samples, 90% of the user addresses in executable mappings, 70% of the samples reaching
 * three frames and no cycle.  Otherwise DWARF, when the executable has unwind tables.
 */
#ifndef COLLECT_CALIB_H
#define COLLECT_CALIB_H

#include <stdint.h>
#include <sys/types.h>

#include "perf.h"
#include "ranges.h"

#define CALIB_MIN_SAMPLES 64
#define CALIB_MAX_NS 10000000000ull
#define CALIB_MAPPED_PERMILLE 900
#define CALIB_DEEP_PERMILLE 700

/* What a calibration found, as FR_TARGET shows it. */
struct calib_result {
	uint32_t samples, mapped_permille, deep_permille, cycles;
	const char *verdict;    /* "accepted" or "rejected"; NULL when no calibration ran */
};

/* How calib_run reads the target: its events, the records' parser and when it must stop. */
struct calib_env {
	struct perf_set *perf;  /* open in frame-pointer mode */
	perf_record_fn handle;  /* the records' parser: samples reach calib_sample */
	void *arg;              /* handle's and again's */
	int pidfd;
	pid_t pid;
	int soft;               /* the recording started: an end is returned, not fatal */
	uint64_t deadline_ns;   /* with soft, the end of --duration; 0: none */
	void (*again)(void *arg); /* after an exec, before the calibration starts over */
};

struct calib {
	pid_t pid;
	uint32_t samples, deep, cycles;
	uint64_t addrs, mapped;
	int exec;               /* the target executed a new image during this read */
	int accepted;
	char reason[256];
	struct calib_result result;
	/* the executable ranges of the target, read when the samples are judged: a launched
	 * program maps its libraries after the calibration began */
	struct ranges maps;
	/* the user callchains seen, each as a pid, a count, then its addresses (in the cgroup
	 * scope of launch the samples of every process of the cgroup count) */
	uint64_t *chains;
	size_t nchains, capchains;
};

/* Runs the calibration on env's events.  An exec restarts it, after env->again ran.
 * Before the recording started, target exit and SIGINT/SIGTERM are fatal; once it started
 * (env->soft, a calibration after an exec), they and the deadline end the calibration with
 * the END_* reason returned.  Fills k (its verdict in k->result) and returns 0 otherwise. */
int calib_run(struct calib *k, const struct calib_env *env);
/* Keeps one sample's user callchain (leaf first); the records callback calls it. */
void calib_sample(struct calib *k, uint32_t pid, const uint64_t *uips, unsigned nuser);
/* The records callback saw the target execute a new image: the calibration starts over. */
void calib_exec(struct calib *k);
/* 1 when the executable behind /proc/PID/exe has .eh_frame or .debug_frame. */
int calib_has_unwind_tables(pid_t pid);
void calib_free(struct calib *k);

#endif
