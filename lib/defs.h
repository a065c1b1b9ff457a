/*
 * Definitions that live for the whole stream: the target, mappings, functions, locations
 * (ids unique per stream) and thread names (latest FR_COMM per tid wins).  Strings are
 * copied into one pool and referenced by offset, so the frames they came from can go.
 * Pointers returned by the lookups are valid until the next defs_add_* or defs_set_*.
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

struct defs {
	uint32_t target_pid, cpu_frequency;
	int have_target;
	/* The profiles the windows have, from the latest target: cpu when requested (or when
	 * the target names none), off-cpu when its collector runs (TARGET_OFFCPU). */
	int profile_cpu, profile_offcpu;
	struct pstr exe;
	struct pstr comm;       /* the target's process name at start */

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

	struct pstr *comms;     /* thread names, indexed through comm_ix */
	size_t ncomms, cap_comms;
	struct idmap comm_ix;

	char err[200];
};

void defs_init(struct defs *d);
void defs_release(struct defs *d);

/* Each returns 0, or -1 with d->err set (a redefined id, or out of memory). */
int defs_set_target(struct defs *d, const struct fr_target *t);
int defs_add_mapping(struct defs *d, const struct fr_mapping *m);
int defs_add_function(struct defs *d, const struct fr_function *f);
int defs_add_location(struct defs *d, const struct fr_location *l);
int defs_set_comm(struct defs *d, const struct fr_comm *c);
/* Decodes and keeps f when it is a definition (target, mapping, function, location, comm):
 * 1 when kept, 0 for any other frame type, -1 with d->err set (corrupt or redefined). */
int defs_take(struct defs *d, const struct frame *f);

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
