/*
 * The off-CPU collector: the sched_switch eBPF program of bpf/offcpu.bpf.c, loaded from
 * its skeleton, and the drain that turns its intervals into FR_OFFCPU frames
 * (docs/offcpu.md).
 */
#ifndef COLLECT_OFFCPU_H
#define COLLECT_OFFCPU_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cpulist.h"
#include "emit.h"

struct offcpu_config {
	unsigned phases;        /* OFFCPU_WANT_* of bpf/offcpu_shared.h */
	uint64_t min_ns;        /* --offcpu-min-duration-us in ns */
	uint64_t ring_bytes;    /* --offcpu-ring-buffer: a power of two, >= 4096 */
	unsigned percent;       /* --offcpu-probability: switch-outs recorded, 1..100 */
	const char *btf_path;   /* --offcpu-btf: kernel BTF when the kernel has none */
	int recording;          /* 0: the --check probe, which records nothing */
	uint64_t cgroup_id;     /* launch's cgroup scope: every process in it; 0: pid only */
	int verbose;            /* -v: libbpf's messages on stderr */
	const struct cpulist *cpus; /* --cpuid: switch-outs on these CPUs only; NULL: all */
	/* How many leading kernel ips of a stack are the collector's own frames (the BPF
	 * program and the tracepoint's glue), left out of every interval. */
	size_t (*own_frames)(void *arg, const uint64_t *ips, size_t n);
	/* Called before each interval of process pid is written: what the stream needs
	 * first (FR_KSYM, the mappings of a process new to it).  The kernel ips come with the
	 * first interval of each kernel stack only (n is 0 after): their symbols are sent. */
	void (*before)(void *arg, uint32_t pid, const uint64_t *kips, size_t n);
	void *arg;
};

struct offcpu;

/* Loads the program for the threads of pid, not attached yet; NULL with a one-line reason
 * in why when the kernel cannot (too old, no BTF, verifier failure). */
struct offcpu *offcpu_open(pid_t pid, const struct offcpu_config *cfg, char *why,
			   size_t whylen);
/* The recording starts at start_ns (its intervals are cut at deadline_ns, the end of
 * --duration, 0: none): the threads asleep now are noted (collect/offcpu_blocked.c).  Then,
 * after any unwind calibration, offcpu_attach() attaches the program and opens the
 * intervals of the threads still asleep, at start_ns for those that have not run since.
 * Both: 0, or -1 with a one-line reason in why. */
int offcpu_begin(struct offcpu *o, uint64_t start_ns, uint64_t deadline_ns, char *why,
		 size_t whylen);
int offcpu_attach(struct offcpu *o, char *why, size_t whylen);
/* An fd that becomes readable when the ring buffer asks for a drain (epoll). */
int offcpu_fd(const struct offcpu *o);
/* One drain at now: first the threads still off the CPU are reported up to *round (which
 * is lowered to the start of any interval that --offcpu-min-duration-us may still drop),
 * then the finished intervals, then what the program counted as lost. */
void offcpu_drain(struct offcpu *o, struct emit *out, uint64_t *round);
/* The recording ends at end: threads still off the CPU are reported up to end and counted
 * incomplete. */
void offcpu_finish(struct offcpu *o, struct emit *out, uint64_t end);
void offcpu_close(struct offcpu *o);

/* offcpu_setup.c: collect's use of the above. */
struct collect;
struct collect_opts;

struct offcpu_run {
	struct offcpu *prog;            /* the collector, NULL when not running */
	int dropped;                    /* it could not run: --allow-partial went on without */
	char why[320];                  /* why */
};

void offcpu_defaults(struct collect_opts *o);
/* --profiles LIST: sets cpu, offcpu and profiles; exits 1 on a bad list. */
void offcpu_profiles(struct collect_opts *o, const char *list);
/* getopt values of --offcpu-phase, --offcpu-min-duration-us, --offcpu-ring-buffer and
 * --offcpu-btf, above those of opts.c. */
enum {
	OPT_OFFCPU_PHASE = 0x4f00, OPT_OFFCPU_MIN, OPT_OFFCPU_RING, OPT_OFFCPU_BTF,
	OPT_OFFCPU_PROBABILITY
};
/* One of those options; exits 1 on a bad value. */
void offcpu_option(struct collect_opts *o, int opt, const char *arg);
/* --check: loads and unloads the program once.  Start: loads it for the recording into
 * c->offcpu.  Both exit 1 when it cannot run, unless --allow-partial keeps the cpu profile
 * going.  The program's callbacks write what its intervals need first into c's stream. */
void collect_offcpu_probe(struct collect *c);
void collect_offcpu_load(struct collect *c);
void collect_offcpu_begin(struct collect *c);
void collect_offcpu_start(struct collect *c);
/* After the first FR_TARGET: the warning of a dropped off-cpu profile. */
void collect_offcpu_announce(const struct offcpu_run *r, struct emit *out, uint64_t time);
void collect_offcpu_drain(struct offcpu_run *r, struct emit *out, uint64_t *round);
/* The recording's end as for the heap program (heap.h): _last, _stop, or _end for both. */
void collect_offcpu_last(struct offcpu_run *r, struct emit *out, uint64_t end);
void collect_offcpu_stop(struct offcpu_run *r);
void collect_offcpu_end(struct offcpu_run *r, struct emit *out, uint64_t end);

#endif
