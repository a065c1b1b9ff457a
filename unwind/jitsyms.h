/*
 * Names for JIT code (docs/jit.md): the perf map and jitdump of each process, as collect
 * copied them into the module cache (DIR/.jit/SESSION/PID/perf.map and jit.dump, SESSION
 * the stream's session id in hex).  A process's files are read the first time an address
 * in its anonymous executable memory finds no name, and read on from where they stopped
 * when a later miss finds them grown (size or modification time), at most every
 * JIT_RECHECK_NS per process: the runtime appends as it compiles.
 */
#ifndef RP_JITSYMS_H
#define RP_JITSYMS_H

#include <stdint.h>
#include <sys/types.h>

#include "jitparse.h"

#define JIT_RECHECK_NS 100000000ull /* a process's files are looked at again after this */

struct jitfile {
	uint64_t off;                /* bytes parsed */
	off_t size;                  /* as last seen */
	int64_t mtime_ns;
	int found;
	struct jitdump_state ds;     /* the jitdump's */
};

struct jitproc {
	uint32_t pid;
	struct jittab tab;
	struct jitfile map, dump;
	uint64_t next_check;         /* monotonic ns */
	int missed;                  /* a lookup found no name: looked at on every poll */
};

/* Totals since the start, for the jit frame (diagnostics "jit"). */
struct jitstats {
	uint64_t files, symbols, named, unnamed, dropped, truncated, malformed, rereads;
};

struct jitsyms {
	char *dir;                   /* DIR/.jit/SESSION; NULL: no module cache */
	struct jitproc *v;
	size_t n, cap;
	struct jitstats st;
	int changed;                 /* st changed since jitsyms_take_changed */
};

/* 0, or -1 when out of memory.  module_cache may be NULL (nothing is ever found). */
int jitsyms_init(struct jitsyms *j, const char *module_cache, uint64_t session_id);
void jitsyms_release(struct jitsyms *j);
/* The name of addr in process pid, or NULL; *grew is set to 1 when the process's files
 * were read on and gave new symbols (names cached for its addresses may be outdated). */
const char *jitsyms_lookup(struct jitsyms *j, uint32_t pid, uint64_t addr, int *grew);
/* Looks again at the files of each process a lookup ever missed in (at most every
 * JIT_RECHECK_NS): its unnamed addresses are cached, with the stacks holding them, and
 * would otherwise never be looked up again.  Calls grew(arg, pid) for each
 * process that gained symbols. */
void jitsyms_poll(struct jitsyms *j, void (*grew)(void *arg, uint32_t pid), void *arg);
/* Forgets the process (it ended): its files are not read again. */
void jitsyms_drop(struct jitsyms *j, uint32_t pid);
/* 1 when the statistics changed since the last call. */
int jitsyms_take_changed(struct jitsyms *j);

#endif
