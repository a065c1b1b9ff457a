/*
 * commit: the module cache's retention (docs/module-cache.md).
 *
 * Each published window leaves OUTPUT/.modules/.refs/<its diagnostics file name>: the build
 * ids of the modules its profiles refer to (FR_MODULES, one per line), written before the
 * window is renamed into place and removed after its files by retention.  A window that
 * came without a list (a pipeline without emit-pprof) gets no refs file, and neither does
 * one whose list could not be written (a warning says so); a diagnostics file without its
 * refs file stands for "every module", so an output directory holding such a window is
 * never pruned.
 *
 * Pruning, after retention removed a window and at the end of the stream: a module of
 * OUTPUT/.modules/.build-id goes when no diagnostics file of the directory (of any session)
 * has a refs file that names it and no running session lists it (.sessions/SESSION,
 * locked by its collect).  Candidates are first renamed aside, the running sessions' lists
 * read again, and what they name by then put back: a module a session starts to use while
 * the pass runs survives it.  Refs files whose window is gone are removed, as are the
 * lists of ended sessions.
 */
#ifndef RP_COMMIT_MODREFS_H
#define RP_COMMIT_MODREFS_H

#include "stream.h"

struct commit;

/* An FR_MODULES frame: remembered for its window. */
void modrefs_add(struct commit *c, const struct fr_modules *m);
/* Before window index is renamed into place: its refs file, named diag_name. */
void modrefs_publish(struct commit *c, uint32_t index, const char *diag_name);
/* Retention removed the window of diag_name. */
void modrefs_unpublish(struct commit *c, const char *diag_name);
/* Removes the modules nothing refers to; ended: the stream's own session has ended. */
void modrefs_prune(struct commit *c, int ended);
/* jitprune.c: removes .modules/.jit/SESSION (open as jit) of each ended session that no
 * diagnostics file in the directory belongs to any more; sessions is .modules/.sessions. */
void jitprune(struct commit *c, int jit, int sessions, int ended);
void modrefs_release(struct commit *c);

#endif
