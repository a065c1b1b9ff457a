/*
 * Frame-pointer stacks: the kernel already walked the user stack; here every user address is
 * checked against the process's executable mappings and the stack is classified.
 *
 * A stack is usable when it is not empty, has no cycle and its user addresses lie in
 * executable mappings.  Addresses past the first one outside every mapping are dropped (a
 * frame chain that left the program, typically through a library built without frame
 * pointers); the stack keeps the valid part but is counted as out of mapping.  A cycle is a
 * chain that hit the depth limit while repeating a period of at most four addresses: a frame
 * linking back to itself.  Recursion that deep looks the same and is counted the same.
 */
#ifndef RP_FPSTACK_H
#define RP_FPSTACK_H

#include "resolve.h"
#include "stream.h"

#define FP_MAX_FRAMES 127 /* the manual's per-sample limit, kernel and user frames together */

/* Fills out (leaf first) from the raw sample.  0, or -1 on a write error.  A sample whose
 * addresses and process mappings were seen before gets the same stack from a cache (a
 * profile repeats a few thousand stacks), with no per-address lookups. */
int fpstack_resolve(struct resolver *r, const struct fr_sample *s, struct fr_stack *out);
void fpcache_free(struct fpcache *c); /* accepts NULL */
/* Empties the slots of process pid (it ended): a cache that only ever fills keeps the
 * stacks of thousands of dead processes.  Accepts NULL. */
void fpcache_forget(struct fpcache *c, uint32_t pid);

#endif
