/*
 * The heap collector: the allocator uprobes of bpf/heap.bpf.c, loaded from its skeleton
 * and attached to the functions heapsym.h found, and the drain that turns its records into
 * FR_ALLOC and FR_HEAP_FREE frames and its counters into FR_LOST (docs/heap.md).
 */
#ifndef COLLECT_HEAP_H
#define COLLECT_HEAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "emit.h"
#include "stacktop.h"
#include "heapsym.h"

/* How the probes attach (--uprobes): HEAP_UPROBES_TRACEFS, a uprobe each made in tracefs
 * (uprobe.h); HEAP_UPROBES_MULTI, one uprobe_multi link for the entries and one for the
 * returns (Linux 6.12+, whose process filter takes every thread of the target).  The links
 * cost less to make and to remove, but the kernel never takes their breakpoints out of a
 * process the filter turns away: a child the target forks without executing a new image
 * traps at every allocator call (a shell script's subshells ran 50 times slower), where a
 * tracefs probe leaves such a child at its first hit.  So tracefs is the default. */
enum heap_uprobes { HEAP_UPROBES_TRACEFS, HEAP_UPROBES_MULTI };
#define HEAP_UPROBES_DEFAULT "tracefs"  /* a stage option: not the driver's, not defaults.h */

struct heap_config {
	uint64_t interval;      /* --alloc-interval, bytes */
	int uprobes;            /* enum heap_uprobes */
	int dwarf;              /* copy registers and stack for unwind's CFI walk */
	int empty;              /* the benchmark's floor: the probes run an empty program */
	int verbose;
	/* Each allocation's frame-pointer stack (return addresses leaf first) before it is
	 * written: auto's fallback judges them with the CPU stacks. */
	void (*judge)(void *arg, uint64_t time, const uint64_t *ips, unsigned n);
	void *arg;
	struct stacktop *top;   /* stack copies are cut at the main thread's start (or NULL) */
};

struct heap;

/* Loads the program for pid and attaches it to the functions of p; NULL with a one-line
 * reason in why. */
struct heap *heap_open(pid_t pid, const struct heap_probe *p, const struct heap_config *cfg,
		       char *why, size_t whylen);
/* check's load probe: the program loads (the verifier accepts it) for pid, and is removed
 * again without any probe attached.  0, or -1 with a one-line reason in why. */
int heap_load_probe(pid_t pid, char *why, size_t whylen);
/* An fd that becomes readable when the ring buffer asks for a drain (epoll). */
int heap_fd(const struct heap *h);
/* Writes what the ring holds, then what the program counted as lost since the last drain,
 * stamped now. */
void heap_drain(struct heap *h, struct emit *out, uint64_t now);
/* From now on the ring's records are kept in memory, not written (before the stream is
 * open: auto's calibration), to at most 32 MiB of stack copies. */
void heap_hold(struct heap *h);
/* Writes what was held up to time until, as the ring gave it when deep, else each
 * allocation with its frame-pointer stack alone.  With until UINT64_MAX the rest, and the
 * hold ends: the probes capture stack copies when deep, and not otherwise, and heap_drain
 * writes as before.  Returns then the count of allocations held past the bound without
 * their stack copy (deep: written without a stack, and counted as stack failures). */
uint64_t heap_release(struct heap *h, struct emit *out, int deep, uint64_t until,
		      uint64_t now);
/* From now on the allocations carry the registers and a stack copy (on) or not. */
void heap_set_dwarf(struct heap *h, int on);
/* The live samples of from (an exec's old probes) join to's table, so that to matches
 * their frees; returns how many. */
size_t heap_take_live(struct heap *to, const struct heap *from);
void heap_close(struct heap *h);

/* heap_setup.c: collect's use of the above. */
struct collect;
struct collect_opts;

struct heap_run {
	struct heap *prog;              /* the collector, NULL when not running */
	struct heap_probe probe;        /* the allocator found (or why none) */
	int dropped;                    /* it could not run: --allow-partial went on without
					 * (1), or the target ended before it could (2) */
	int watched_fd;                 /* the ring the loop watches (0: none yet) */
	char why[560];
};

/* getopt values of --alloc-interval, --allocator and --uprobes, above those of opts.c. */
enum { OPT_ALLOC_INTERVAL = 0x4e00, OPT_ALLOCATOR, OPT_UPROBES };
void heap_defaults(struct collect_opts *o);
/* One of those options; exits 1 on a bad value. */
void heap_option(struct collect_opts *o, int opt, const char *arg);
/* The preflight's allocator probe (--check, and before the recording): exits 1 when no
 * family is available, unless --allow-partial keeps another profile. */
void collect_heap_probe(struct collect *c);
/* Before auto's calibration: attaches the probes with DWARF capture and holds their
 * records; collect_heap_tick takes them from the ring while the calibration runs, and
 * collect_heap_release writes them up to time until (UINT64_MAX: all, and the hold ends)
 * as the calibration's records are written in the mode chosen. */
void collect_heap_hold(struct collect *c);
void collect_heap_tick(struct collect *c);
void collect_heap_release(struct collect *c, uint64_t until);
/* Once the unwind mode is chosen: writes what was held in that mode, or attaches the
 * probes now (the same exits as the preflight's probe). */
void collect_heap_start(struct collect *c);
/* After an exec at `at` (HEAP_RESET_EXEC; the new image's allocator is found again) or the
 * fallback's switch to DWARF (HEAP_RESET_REATTACH, at 0: now): the heap state restarts,
 * with a heap-reset frame and a warning. */
void collect_heap_restart(struct collect *c, uint32_t why, uint64_t at);
/* An exec at `at` is seen: the heap-reset goes out now, before the new image's
 * calibration holds and writes its allocations (after `at`) with its samples. */
void collect_heap_exec(struct collect *c, uint64_t at);
void collect_heap_announce(const struct heap_run *r, struct emit *out, uint64_t time);
void collect_heap_drain(struct heap_run *r, struct emit *out, uint64_t now);
/* The recording's end: _last writes what the program still holds, _stop detaches it (its
 * probes' removal waits on the kernel, about 100 ms each: after the stream is out);
 * _end does both. */
void collect_heap_last(struct heap_run *r, struct emit *out, uint64_t end);
void collect_heap_stop(struct heap_run *r);
void collect_heap_end(struct heap_run *r, struct emit *out, uint64_t end);

#endif
