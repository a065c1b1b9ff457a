/*
 * The build ids a window's profiles refer to, sent on as FR_MODULES before the window's
 * end: commit keeps them so that the module cache's retention knows which modules the
 * published windows still need (docs/module-cache.md).
 */
#ifndef EP_MODULES_H
#define EP_MODULES_H

#include "profile.h"
#include "stream.h"

/* Writes the FR_MODULES frames of window index for the profiles p[0..n) (closed ones
 * count for nothing).  0, or -1 with out->err (or out of memory). */
int modules_announce(struct stream_writer *out, uint32_t index, const struct profile *const *p,
		     int n);

#endif
