/*
 * The physical memory collector: the kmem page allocator tracepoints of bpf/physical.bpf.c,
 * loaded from its skeleton, and the drain that turns its records into FR_PAGE_ALLOC and
 * FR_PAGE_FREE frames and its counters into FR_LOST kinds 13 to 15 (docs/physical.md).
 */
#ifndef COLLECT_PHYSICAL_H
#define COLLECT_PHYSICAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "emit.h"

struct physical;

struct physical_config {
	pid_t pid;                      /* the target process ... */
	uint64_t cgroup_id;             /* ... or, when not 0, every task of this cgroup */
	unsigned probability;           /* percent of the page allocations sampled, 1..100 */
	int verbose;
	/* Called with the pid of each allocation before its frame goes out (a process of
	 * the cgroup the stream may not know yet). */
	void (*seen)(void *arg, uint32_t pid);
	void *arg;
};

/* Loads and attaches the program; NULL with a one-line reason in why. */
struct physical *physical_open(const struct physical_config *cfg, char *why, size_t whylen);
/* Another process of the target (a child followed); 0, or -1 when the table is full. */
int physical_add_process(struct physical *p, pid_t pid);
/* An fd that becomes readable when the ring buffer asks for a drain (epoll). */
int physical_fd(const struct physical *p);
/* Writes what the ring holds, then what the program counted as lost since the last drain,
 * stamped now. */
void physical_drain(struct physical *p, struct emit *out, uint64_t now);
/* From now on the ring's records are kept in memory, not written (auto's calibration: the
 * stream is not open, or its samples go out later), to at most 32 MiB of stacks; past that
 * an allocation is kept without its stack (a stack failure). */
void physical_hold(struct physical *p);
/* Writes the held records stamped up to until (UINT64_MAX: all of them, and the hold
 * ends, with what the ring still has and the counters), in time order with the
 * calibration's samples. */
void physical_release(struct physical *p, struct emit *out, uint64_t until, uint64_t now);
void physical_close(struct physical *p);

/* physical_setup.c: collect's use of the above. */
struct collect;
struct collect_opts;

struct physical_run {
	struct physical *prog;          /* the collector, NULL when not running */
	int dropped;                    /* it could not run: --allow-partial went on without */
	int watched_fd;                 /* the ring the loop watches (0: none yet) */
	char why[400];
};

/* getopt value of --physical-memory-probability, above heap's (heap.h). */
enum { OPT_PHYSICAL_PROBABILITY = 0x4e80 };
void physical_option(struct collect_opts *o, const char *arg);
/* --check and before the recording: the program loads and attaches (and goes again), or
 * collect exits 1 unless --allow-partial keeps another profile. */
void collect_physical_probe(struct collect *c);
/* Before auto's calibration: attached now, its records held (physical_hold) for
 * collect_physical_release to write with the calibration's samples; collect_physical_tick
 * empties the ring while the calibration runs. */
void collect_physical_hold(struct collect *c);
void collect_physical_tick(struct collect *c);
void collect_physical_release(struct collect *c, uint64_t until);
/* Once the unwind mode is chosen: attached now, unless it was for the calibration. */
void collect_physical_start(struct collect *c);
void collect_physical_announce(const struct physical_run *r, struct emit *out, uint64_t t);
void collect_physical_drain(struct physical_run *r, struct emit *out, uint64_t now);
/* The recording's end as for the heap program (heap.h): _last, _stop, or _end for both. */
void collect_physical_last(struct physical_run *r, struct emit *out, uint64_t end);
void collect_physical_stop(struct physical_run *r);
void collect_physical_end(struct physical_run *r, struct emit *out, uint64_t end);

#endif
