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

#include "ranges.h"

#define CALIB_MIN_SAMPLES 64
#define CALIB_MAX_NS 10000000000ull
#define CALIB_MAPPED_PERMILLE 900
#define CALIB_DEEP_PERMILLE 700

struct collect;

struct calib {
	uint32_t samples, deep, cycles;
	uint64_t addrs, mapped;
	int accepted;
	char reason[256];
	/* the executable ranges of the target, read when the samples are judged: a launched
	 * program maps its libraries after the calibration began */
	struct ranges maps;
	/* the user callchains seen, each as a pid, a count, then its addresses (in the cgroup
	 * scope of launch the samples of every process of the cgroup count) */
	uint64_t *chains;
	size_t nchains, capchains;
};

/* Runs the calibration with c's events open in frame-pointer mode.  An exec restarts it,
 * after preflight_again(c) ran.  Before the recording started, target exit and
 * SIGINT/SIGTERM are fatal; once it started (c->recording, a calibration after an exec),
 * they and the deadline end the calibration with the END_* reason returned.  Fills k and
 * returns 0 otherwise. */
int calib_run(struct collect *c, int pidfd, struct calib *k,
	       void (*preflight_again)(struct collect *c));
/* Keeps one sample's user callchain (leaf first); the records callback calls it. */
void calib_sample(struct calib *k, uint32_t pid, const uint64_t *uips, unsigned nuser);
/* 1 when the executable behind /proc/PID/exe has .eh_frame or .debug_frame. */
int calib_has_unwind_tables(pid_t pid);
void calib_free(struct calib *k);

#endif
