/*
 * The JIT runtimes' symbol files into the module cache (docs/jit.md): a process that maps
 * anonymous executable memory may name its code in /tmp/perf-PID.map (PID as the process
 * knows itself, in its own PID namespace) and in a jitdump it maps (jit-PID.dump, anywhere:
 * the mapping is how it is found, as perf finds it).  collect, which may read the target's
 * files in its own mount namespace (/proc/PID/root), copies both, appending what they
 * gained since the last look, to DIR/.jit/SESSION/PID/perf.map and jit.dump; unwind, which
 * runs unprivileged and confined to the cache, reads the copies, and so does a replay.
 *
 * The files are the target's: each is opened inside the process's root without following
 * a symbolic link, and copied only when it is a regular file with one link, owned by the
 * process's user (a link to a file it could not read is not copied).  The copies count
 * against --max-module-cache.
 */
#ifndef COLLECT_JITCOPY_H
#define COLLECT_JITCOPY_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "stream.h"

#define JITCOPY_MAX_PROCS 4096      /* processes watched; later ones are not */
#define JITCOPY_EVERY_NS 20000000ull /* the files are looked at at most this often */

struct modcache;
struct emit;

struct jitsrc {
	uint64_t copied;     /* bytes of the source in the copy */
	int stopped;         /* the source shrank or is not the process's: not copied on */
};

struct jitwatch {
	pid_t pid, nspid;    /* nspid: the pid in the process's own namespace */
	uid_t uid;           /* the process's user: its files must be owned by it */
	char dump[PATH_MAX]; /* the jitdump's path as mapped ("" until one is) */
	struct jitsrc map, jd;
};

struct jitcopy {
	struct modcache *cache;
	struct emit *out;
	char dir[PATH_MAX];  /* DIR/.jit/SESSION; "" without a cache */
	struct jitwatch *v;
	size_t n, cap;
	uint64_t next_ns;
	int fresh;           /* a process or jitdump came since the last look */
	int said_full;
};

void jitcopy_init(struct jitcopy *j, struct modcache *cache, struct emit *out,
		  uint64_t session_id);
/* An executable mapping went out: watch its process when it is anonymous memory, and note
 * its jitdump when it is one. */
void jitcopy_mapping(struct jitcopy *j, const struct fr_mmap *m, const char *path);
/* Copies what the watched files gained, at most every JITCOPY_EVERY_NS unless force. */
void jitcopy_sync(struct jitcopy *j, uint64_t now, int force);
/* Before a sample goes out: when a process or jitdump came since the last look (a mapping
 * in the same pass over the rings, or a calibration's samples written at its end), its
 * files are copied first, so the sample's JIT frames can be named. */
void jitcopy_before_sample(struct jitcopy *j);
void jitcopy_free(struct jitcopy *j);

#endif
