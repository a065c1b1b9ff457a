/*
 * Definitions that live for the whole stream: the target, mappings, functions, locations
 * (ids unique per stream) and thread names (latest FR_COMM per tid wins).  Strings are
 * copied into one pool and referenced by offset, so the frames they came from can go.
 * Pointers returned by the lookups are valid until the next defs_add_*, defs_set_* or
 * defs_forget.
 *
 * FR_FORGET (aggregate passes it on once no later frame can name them) marks mappings no
 * process maps any more, the locations in them and the names of ended threads as gone.  What is
 * gone is given back in one pass, which rebuilds the tables and the string pool from what
 * is left, once it outweighs what is left: under process churn the tables stay within
 * twice what the live processes and the functions ever named need.
 */
#ifndef RP_DEFS_H
#define RP_DEFS_H

#include <stddef.h>
#include <stdint.h>

#include "idmap.h"
#include "stream.h"

/* A string in the pool. */
struct pstr {
	size_t off;
	uint32_t len;
};

struct def_mapping {
	uint32_t id, pid, flags;
	uint32_t nlocations;    /* locations defined in it */
	int gone;               /* its process was forgotten */
	uint64_t start, limit, offset;
	struct pstr path;
	struct pstr build_id;   /* lowercase hex */
};

struct def_function {
	uint32_t id, start_line;
	struct pstr name, system_name, filename;
};

struct def_location {
	uint32_t id, mapping_id;
	uint64_t address;
	size_t lines;           /* index of the first line in defs.lines */
	uint16_t nlines;
};

struct def_comm {
	struct pstr name;
	uint32_t pid, tid;
	int gone;               /* the thread was forgotten */
};

/* container.id, container.name, k8s.namespace.name, k8s.pod.name, k8s.pod.uid,
 * k8s.container.name: OpenTelemetry's resource attribute names. */
#define DEFS_LABELS 6
extern const char *const defs_label_keys[DEFS_LABELS];

struct defs {
	uint32_t target_pid, cpu_frequency;
	int have_target;
	/* The profiles the windows have, from the latest target: cpu when requested (or when
	 * the target names none), off-cpu when its collector runs (TARGET_OFFCPU). */
	int profile_cpu, profile_offcpu;
	int profile_heap;               /* the target is flagged TARGET_HEAP */
	uint64_t alloc_interval;        /* the heap profile's period (bytes) */
	/* TARGET_PHYSICAL: physical-alloc and physical-usage as named in its profiles, and
	 * the percentage of page allocations sampled (1..100). */
	int profile_physical_alloc, profile_physical_usage;
	uint32_t physical_percent;
	struct pstr exe;
	struct pstr comm;       /* the target's process name at start */
	/* What the periods count (the target's sample type): empty for CPU nanoseconds. */
	struct pstr sample_type, sample_unit;
	/* The samples are of the hardware cycles event in frequency mode (the target's
	 * cpu_event "cycles"): periods count cycles, and the CPU time is estimated. */
	int cycles;
	/* A container target's identity, as sample labels: values of defs_label_keys, an
	 * empty one left out (every target but a container has them all empty). */
	struct pstr labels[DEFS_LABELS];

	char *pool;
	size_t pool_len, pool_cap;

	struct def_mapping *mappings;
	size_t nmappings, cap_mappings;
	struct idmap mapping_ix;

	struct def_function *functions;
	size_t nfunctions, cap_functions;
	struct idmap function_ix;

	struct def_location *locations;
	size_t nlocations, cap_locations;
	struct idmap location_ix;
	struct fr_line *lines;
	size_t nlines, cap_lines;

	struct def_comm *comms; /* thread names, indexed through comm_ix */
	size_t ncomms, cap_comms;
	struct idmap comm_ix;

	size_t gone;            /* mappings, locations and names forgotten, not yet freed */
	uint64_t compactions;   /* passes that freed them: each moves every entry */

	char err[200];
};

void defs_init(struct defs *d);
void defs_release(struct defs *d);

/* Each returns 0, or -1 with d->err set (a redefined id, or out of memory). */
int defs_set_target(struct defs *d, const struct fr_target *t);
/* 1 when the comma-separated list (a target's profiles) has name as one of its items. */
int defs_profile_named(struct str list, const char *name);
int defs_add_mapping(struct defs *d, const struct fr_mapping *m);
int defs_add_function(struct defs *d, const struct fr_function *f);
int defs_add_location(struct defs *d, const struct fr_location *l);
int defs_set_comm(struct defs *d, const struct fr_comm *c);
/* FR_FORGET: the mappings it lists and their locations; with tid 0 the names of pid's
 * threads, with another tid that thread's name. */
int defs_forget(struct defs *d, const struct fr_forget *f);
/* Decodes and keeps f when it is a definition (target, mapping, function, location, comm)
 * or acts on an FR_FORGET: 1 when taken, 0 for any other frame type, -1 with d->err set
 * (corrupt or redefined). */
int defs_take(struct defs *d, const struct frame *f);

/* The CPU nanoseconds count cycle samples stand for, sampled in frequency mode at hz: each
 * one 1/hz s of the task's running time (docs/host.md); 0 without a frequency. */
uint64_t defs_cycles_ns(uint64_t count, uint32_t hz);

/* NULL when the id was never defined. */
const struct def_mapping *defs_mapping(const struct defs *d, uint32_t id);
const struct def_function *defs_function(const struct defs *d, uint32_t id);
const struct def_location *defs_location(const struct defs *d, uint32_t id);
/* The latest name of tid, or NULL. */
const struct pstr *defs_comm(const struct defs *d, uint32_t tid);

static inline const char *
defs_str(const struct defs *d, struct pstr s)
{
	return d->pool + s.off;
}

#endif
