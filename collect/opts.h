/* Command line of collect: every value is checked before any privileged work. */
#ifndef COLLECT_OPTS_H
#define COLLECT_OPTS_H

#include <stdint.h>
#include <sys/types.h>

#include "cpusel.h"

struct collect_opts {
	pid_t pid;                      /* --pid; for a container: its init process now */
	const char *docker;             /* --docker-container ID_OR_NAME */
	const char *k8s_pod;            /* --k8s-pod NAMESPACE/NAME */
	const char *container;          /* --container NAME (with --k8s-pod) */
	uint64_t duration_ns;           /* 0: no deadline */
	unsigned freq;
	const char *unwind;             /* "auto" or "fp" */
	const char *kind;               /* "pid", "launch", "docker" or "kubernetes" */
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
	int landlock_abi;               /* --landlock-abi: --check prints the Landlock ABI */
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
	int heap;                       /* heap requested */
	uint64_t alloc_interval;        /* --alloc-interval, bytes */
	const char *allocator;          /* --allocator: auto, rust or system */
	int uprobes;                    /* --uprobes: enum heap_uprobes */
	int physical_alloc, physical_usage; /* physical-alloc, physical-usage requested */
	int physical;                   /* either of them */
	unsigned physical_percent;      /* --physical-memory-probability, 1..100 */
	int host;                       /* --host: every process of the machine, no target */
	struct cpusel cpuid;            /* --cpuid: the CPUs sampled (all online without) */
	int require_hw;                 /* --require-hardware-pmu: no CPU-clock fallback */
};

/* Fills o (defaults first); prints --help and exits 0, or exits 1 on a bad option. */
void opts_parse(int argc, char **argv, struct collect_opts *o);

#endif
