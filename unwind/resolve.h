/*
 * Turns addresses into location ids, writing FR_MAPPING, FR_FUNCTION and FR_LOCATION the
 * first time each is needed, so that every id in an FR_STACK is defined before it is used.
 */
#ifndef RP_RESOLVE_H
#define RP_RESOLVE_H

#include <stdint.h>

#include "intern.h"
#include "jitsyms.h"
#include "ksymtab.h"
#include "procmaps.h"
#include "stream.h"
#include "usymtab.h"

struct symbolizer;
struct fpcache;

struct resolver {
	struct stream_writer *out;
	struct symbolizer *sym;
	struct proctab procs;
	struct ksymtab ksyms;   /* FR_KSYM: the kernel symbols samples touched */
	int ksyms_sorted;
	struct usymtab usyms;    /* FR_USYM: symbols the capture carried */
	struct intern locs, funcs;
	struct idmap klocs;      /* kernel address -> location id (shared by every process) */
	uint32_t next_mapping_id;
	uint32_t kernel_mapping_id;
	struct fpcache *fpcache; /* fpstack.c: stacks already resolved */
	/* Processes that ended (FR_EXIT flagged EXIT_PROCESS), forgotten at the first round
	 * at or after their exit: samples of theirs may still follow the exit until then. */
	struct ending { uint64_t time; uint32_t pid; } *ending;
	size_t nending, capending;
	/* Written mappings no process maps any more, with the time from which no stack can
	 * name them (the latest stack written when they went, or the event that removed them,
	 * whichever is later): an FR_FORGET lists them at the first round at or after it. */
	struct gone_id { uint64_t time; uint32_t id; } *forget;
	size_t nforget, capforget;
	uint64_t newest;         /* the latest time of a stack written */
	struct jitsyms *jit;     /* names of JIT code (borrowed); NULL: none */
};

int resolver_init(struct resolver *r, struct stream_writer *out, struct symbolizer *sym);
/* Location id for a kernel address; 0 on a write error. */
uint32_t resolve_kernel(struct resolver *r, uint64_t addr);
/* Location id for a user address inside mapping m of process pid; 0 on a write error.
 * addr is the address to show: the sampled ip for the leaf, return address - 1 above it. */
uint32_t resolve_user(struct resolver *r, uint32_t pid, struct map *m, uint64_t addr);
/* Frames that change the resolver's state: FR_MMAP adds a mapping, FR_COMM of an exec
 * clears them; FR_USYM adds a symbol; FR_FORK gives a new process (not a thread) its
 * parent's mappings when it has none, since a capture replays no mmap for what the child
 * inherits; FR_EXIT of a process and FR_ROUND forget an ended process, and a round writes
 * the FR_FORGET of the mappings gone by its time.  0, or -1 with a reason in err. */
int resolver_frame(struct resolver *r, const struct frame *f, char *err, size_t errlen);
/* A stack (or off-CPU interval ending) at time was written. */
static inline void
resolver_saw(struct resolver *r, uint64_t time)
{
	if (time > r->newest)
		r->newest = time;
}
void resolver_release(struct resolver *r);

/* An FR_KSYM frame into the kernel symbols: 0, or -1 when out of memory. */
int resolver_add_ksym(struct resolver *r, const struct fr_ksym *k);

#endif
