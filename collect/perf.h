/*
 * The sampling events (the CPU clock, or the hardware cycles event where a PMU exists): one event per (thread, CPU), all events of a CPU writing
 * into one ring buffer (PERF_EVENT_IOC_SET_OUTPUT to that CPU's first event), inherit=1 so
 * threads (and child processes, which collect filters out) created later are covered.
 * launch's cgroup scope opens one event per CPU for the whole cgroup instead.
 */
#ifndef COLLECT_PERF_H
#define COLLECT_PERF_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The sample_type collect asks for; records.c parses exactly this layout. */
#define COLLECT_SAMPLE_TYPE                                                          \
	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |     \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN)
#define COLLECT_MAX_STACK 127
/* DWARF mode: the manual's "up to 16 KiB of user stack" and the user registers. */
#define COLLECT_DWARF_SAMPLE_TYPE                                                    \
	(COLLECT_SAMPLE_TYPE | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)
#define COLLECT_STACK_USER 16384
#if defined(__x86_64__)
/* AX..R15 in perf's numbering, less DS, ES, FS and GS, which perf refuses on x86_64. */
#define COLLECT_REGS_MASK (((1ull << 24) - 1) & ~((1ull << 12) | (1ull << 13) | \
						     (1ull << 14) | (1ull << 15)))
#define COLLECT_SP_BIT 7 /* perf's number of the stack pointer */
#elif defined(__aarch64__)
#define COLLECT_REGS_MASK ((1ull << 33) - 1) /* x0..x30, sp, pc */
#define COLLECT_SP_BIT 31
#else
#error "collect supports x86_64 and aarch64"
#endif

struct perf_ring {
	int fd;                 /* the event that owns the mapping */
	int cpu;
	struct perf_event_mmap_page *pg;
	uint8_t *data;
	uint64_t size;          /* bytes in the data area, a power of two */
	size_t map_len;
};

struct perf_set {
	struct perf_event_attr attr;
	int *cpus;              /* online CPUs */
	int ncpu;
	int *leader;            /* per CPU slot: ring index, -1 before the first event */
	struct perf_ring *rings;
	size_t nrings, caprings;
	int *fds;               /* every event fd, for enable and close */
	size_t nfds, capfds;
	int shared;             /* 1 while SET_OUTPUT works; 0: one ring per event */
	int layout;             /* what samples carry: PERF_FP, PERF_DWARF or PERF_BOTH */
	int dwarf;              /* samples carry user registers and stack (not PERF_FP) */
	unsigned ring_pages;
	uint64_t malformed;     /* ring contents that could not be walked */
	uint8_t *scratch;       /* one record that crosses the end of the ring */
};

/* What a sample carries: the user callchain (frame pointers), the user registers and stack
 * copy instead (DWARF), or both (auto's calibration, which keeps its samples for whichever
 * mode it chooses). */
enum { PERF_FP, PERF_DWARF, PERF_BOTH };

/* Builds the attribute (layout one of PERF_*) and finds the online CPUs.  0, or -1 with
 * err. */
int perf_set_init(struct perf_set *p, unsigned freq, int layout, char *err, size_t errlen);
struct cpulist;
/* After perf_set_init, before any event opens: the sampling event is the hardware cycles
 * event (frequency mode, the same --cpu-frequency) instead of the CPU clock when cycles is
 * set (a side-band set stays what it is); the events open on the CPUs of only alone (NULL:
 * every online CPU); with exclude_idle the idle task is not sampled. */
void perf_set_source(struct perf_set *p, int cycles, const struct cpulist *only,
		     int exclude_idle);
/* Whether the hardware cycles event opens in frequency mode: 0, or -1 with why ("no
 * hardware PMU" for ENOENT, EOPNOTSUPP and ENODEV, else the error's text). */
int perf_cycles_probe(unsigned freq, char *why, size_t whylen);
/* Opens tid's events on every CPU: 1 when opened, 0 when the thread is gone, -1 with err. */
int perf_set_add(struct perf_set *p, pid_t tid, char *err, size_t errlen);
/* Opens the events of every task in the cgroup, one per CPU (launch's cgroup scope).  0, or
 * -1 with err. */
int perf_set_add_cgroup(struct perf_set *p, int cgroup_fd, char *err, size_t errlen);
/* One event per CPU for every task (pid -1), never switched with the tasks: side-band
 * (mappings, names and threads) only for recordings without the CPU profile, sampling
 * every task for --host. */
int perf_set_add_cpus(struct perf_set *p, char *err, size_t errlen);
/* Opens and closes one event on tid: the preflight "perf access" probe.  0 or -1 with err. */
int perf_probe(pid_t tid, char *err, size_t errlen);

typedef void (*perf_record_fn)(void *arg, const struct perf_event_header *h);
/* Hands each complete record of the ring to fn (wrapped records are copied whole first).
 * With consume the space is given back to the kernel; without, the records stay. */
void perf_ring_read(struct perf_set *p, struct perf_ring *r, perf_record_fn fn, void *arg,
		    int consume);
void perf_set_close(struct perf_set *p);

#endif
