/*
 * How an emitter hands a window's files to commit (docs/stream-format.md, "file"): the file
 * frames, then the window end, flushed.  After that the temporary files are commit's; on a
 * write error they are removed and the emitter stops with one line.
 */
#ifndef RP_ANNOUNCE_H
#define RP_ANNOUNCE_H

#include "stream.h"
#include "tmpfile.h"

/* Writes ff[0..n) and forwards the window end we; releases t[0..n) on success, discards
 * them and exits 1 on failure. */
void announce_window(struct stream_writer *out, const struct fr_file *ff, struct tmpfile *t,
		     int n, const struct frame *we);

#endif
