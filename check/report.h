/*
 * check: what record's preflight would find about a target, gathered without stopping at
 * the first problem, and printed as text or as the CheckReport JSON (docs/check.md, schema
 * docs/check-report.schema.json).
 */
#ifndef CHECK_REPORT_H
#define CHECK_REPORT_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ctarget.h"
#include "heapsym.h"
#include "preflight.h"

#define CHECK_SCHEMA_VERSION 3
#define CHECK_MAX_MODULES 4096   /* modules reported; more are counted, not listed */
#define CHECK_MAX_FILES 64       /* perf-map / jitdump files listed */

enum cap_status { CAP_OK, CAP_UNAVAILABLE, CAP_NOT_APPLICABLE };

struct cap {
	enum cap_status status;
	char detail[320];        /* why not, or what was found */
};

struct module_info {
	char path[PATH_MAX];
	char build_id[2 * 20 + 1]; /* hex; "" when none */
	int elf;                 /* 0: could not be read as ELF */
	int eh_frame, eh_frame_hdr, debug_frame, debug_info;
	long symtab, dynsym;     /* symbols of each table, 0 when absent */
	char debug_file[PATH_MAX]; /* the separate debug file unwind would use, "" if none */
};

struct msgs {
	char **v;
	size_t n, cap;
};

struct report {
	/* the target */
	const char *selector;    /* "pid", "docker-container" or "k8s-pod" */
	struct ctr_selector csel;/* a container target's selector (kind CTR_NONE for --pid) */
	struct ctr_identity cid; /* what the runtime or the Pod API said, once resolved */
	int resolved;            /* cid holds a running container */
	pid_t pid;
	char executable[PATH_MAX];
	char comm[32];
	int e_machine;
	int threads;             /* -1: unknown */
	struct module_info *mods;
	size_t nmods, capmods, mods_omitted;
	/* the machine */
	struct preflight pf;
	int root;
	int kernel_known;
	/* the allocator family heap would probe (as record's preflight finds it) */
	struct heap_probe alloc;
	int alloc_checked;
	/* probes */
	struct cap perf, lifecycle, offcpu, heap, container;
	char *perf_maps[CHECK_MAX_FILES], *jitdumps[CHECK_MAX_FILES];
	size_t nperf_maps, njitdumps;
	/* options checked */
	const char *const *symbol_dirs;
	size_t nsymbol_dirs;
	const char *debuginfod;
	struct msgs warnings, errors;
};

/* Adds a printf-style line; out of memory exits. */
void report_msg(struct msgs *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* container.c: a container selector resolved to its init process and cgroup (as record
 * resolves it: collect/ctarget.h), or the reason it cannot be. */
void report_container(struct report *r);
/* target.c: the preflight's checks, the executable, threads and perf-map/jitdump files. */
void report_target(struct report *r);
/* modules.c: every mapped ELF module with its build id, unwind sections and symbols. */
void report_modules(struct report *r);
/* probes.c: the allocator family, and the lifecycle, off-CPU and (for a target with an
 * allocator) heap eBPF load probes. */
void report_probes(struct report *r);

/* output.c */
int report_print_text(const struct report *r);
int report_print_json(const struct report *r);
const char *report_arch_name(int e_machine);
void report_free(struct report *r);

#endif
