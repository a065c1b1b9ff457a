/*
 * Turns addresses into location ids, writing FR_MAPPING, FR_FUNCTION and FR_LOCATION the
 * first time each is needed, so that every id in an FR_STACK is defined before it is used.
 */
#ifndef RP_RESOLVE_H
#define RP_RESOLVE_H

#include <stdint.h>

#include "intern.h"
#include "ksymtab.h"
#include "procmaps.h"
#include "stream.h"

struct symbolizer;

struct resolver {
	struct stream_writer *out;
	struct symbolizer *sym;
	struct proctab procs;
	struct ksymtab ksyms;
	struct intern locs, funcs;
	uint32_t next_mapping_id;
	uint32_t kernel_mapping_id;
};

int resolver_init(struct resolver *r, struct stream_writer *out, struct symbolizer *sym);
/* Location id for a kernel address; 0 on a write error. */
uint32_t resolve_kernel(struct resolver *r, uint64_t addr);
/* Location id for a user address inside mapping m of process pid; 0 on a write error.
 * addr is the address to show: the sampled ip for the leaf, return address - 1 above it. */
uint32_t resolve_user(struct resolver *r, uint32_t pid, struct map *m, uint64_t addr);
void resolver_release(struct resolver *r);

#endif
