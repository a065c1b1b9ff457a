/*
 * The off-CPU pieces of one drain, grouped by thread, phase, CPU and stacks.  A group goes out
 * as one FR_OFFCPU with its later pieces appended as spans (docs/stream-format.md), so a
 * thread that blocks at the same place tens of thousands of times a second costs the later
 * stages (symbolization, ordering, windows, emitters) a few frames per drain rather than a
 * frame per context switch.  Groups are written in the order they began, each group's
 * pieces in the order they came.
 */
#ifndef COLLECT_OFFCPU_BATCH_H
#define COLLECT_OFFCPU_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "spanbatch.h"
#include "stream.h"

#define BATCH_MAX_PIECES 65536  /* pieces held before a drain must write them */
#define BATCH_TOP_WORDS 8       /* stack-top words a piece carries (OFFCPU_TOP_WORDS) */

struct batch_key {
	uint32_t tid, pid, cpu, phase;
	int32_t kstack, ustack;  /* ids in the program's stack map */
};

struct batches {
	uint32_t *slots;         /* group index + 1 per hash slot; 0: empty */
	size_t cap;              /* a power of two, at least twice the groups */
	struct batch_key *keys;  /* groups, in the order they began */
	size_t ngroups, cap_groups;
	struct spanbatch pieces;
};

/* Adds a piece to the group of k, with its BATCH_TOP_WORDS stack-top words; 1 when
 * BATCH_MAX_PIECES are held and the caller must flush.  Exits when out of memory. */
int batch_add(struct batches *b, const struct batch_key *k, const struct offcpu_span *s,
	      const void *top);
/* Calls put once per group (more for a group of over STREAM_MAX_SPANS + 1 pieces), with its
 * n pieces packed as spans and their stack-top words packed as fr_offcpu's, then empties
 * the table. */
void batch_flush(struct batches *b,
		 void (*put)(void *arg, const struct batch_key *k, const uint8_t *spans,
			     const uint8_t *top, uint32_t n),
		 void *arg);
void batch_release(struct batches *b);

#endif
