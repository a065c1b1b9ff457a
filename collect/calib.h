/*
 * The frame-pointer calibration of --unwind auto (manual: "Unwinding and automatic
 * fallback"): for up to ten seconds and until 64 samples, frame-pointer callchains of the
 * target are checked against its executable mappings.  FP is accepted only with at least 64
 * samples, 90% of the user addresses in executable mappings, 70% of the samples reaching
 * three frames and no cycle.  Otherwise DWARF, when the executable has unwind tables.
 * The calibration is part of the recording: its events capture what both modes need and
 * records.c keeps their records for the stream, so the verdict only decides how they go out.
 * The target exiting, SIGINT/SIGTERM or the end of --duration end it early, and the verdict
 * is given on the samples there are.
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
	struct perf_set *perf;  /* open with PERF_BOTH */
	perf_record_fn handle;  /* the records' parser: samples reach calib_sample */
	void *arg;              /* handle's */
	int pidfd;
	pid_t pid;
	uint64_t deadline_ns;   /* the end of --duration; 0: none */
	void (*tick)(void *arg); /* after each read of the rings (the held heap ring); or NULL */
};

/* What the records said about the processes, to judge each against its own mappings even
 * once it is gone: an executable mapping, a fork of a new process, an exec. */
struct calib_fact {
	enum { FACT_MAP, FACT_FORK, FACT_EXEC } kind;
	uint32_t pid, ppid;
	uint64_t start, end;
};

struct calib {
	pid_t pid;
	uint32_t samples, deep, cycles;
	uint64_t addrs, mapped;
	int exec;               /* the target executed a new image: the calibration ends */
	int tables;             /* the target's executable has unwind tables (read at start) */
	uint64_t elapsed_ns;    /* how long the last calibration ran */
	int accepted;
	char reason[256];
	struct calib_result result;
	/* the executable ranges of one process, gathered when its samples are judged: a
	 * launched program maps its libraries after the calibration began */
	struct ranges maps;
	struct calib_fact *facts;
	size_t nfacts, capfacts;
	/* the user callchains seen, each as a pid, a count, then its addresses (in the cgroup
	 * scope of launch the samples of every process of the cgroup count) */
	uint64_t *chains;
	size_t nchains, capchains;
};

/* Runs the calibration on env's events.  Fills k (its verdict in k->result) and returns 0,
 * also when the target executed a new image (the verdict is for the image the samples came
 * from; the loop handles the exec and calibrates again), or the END_* reason when the target
 * exited, SIGINT/SIGTERM came or --duration ended first: the verdict is then on the samples
 * seen so far. */
int calib_run(struct calib *k, const struct calib_env *env);
/* Keeps one sample's user callchain (leaf first); the records callback calls it. */
void calib_sample(struct calib *k, uint32_t pid, const uint64_t *uips, unsigned nuser);
/* The records callback saw an executable mapping, a fork of a new process, or an exec (of
 * the target: the calibration ends). */
void calib_map(struct calib *k, uint32_t pid, uint64_t start, uint64_t end);
void calib_fork(struct calib *k, uint32_t pid, uint32_t ppid);
void calib_exec(struct calib *k, uint32_t pid);
/* 1 when the executable behind /proc/PID/exe has .eh_frame or .debug_frame. */
int calib_has_unwind_tables(pid_t pid);
void calib_free(struct calib *k);

#endif
