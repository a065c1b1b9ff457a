/*
 * How an emitter hands a window's files to commit (docs/stream-format.md, "file"): the file
 * frames, then the window end, flushed.  After that the temporary files are commit's; on a
 * write error they are removed and the emitter stops with one line.
 */
#ifndef RP_ANNOUNCE_H
#define RP_ANNOUNCE_H

#include "stream.h"
#include "tmpfile.h"
#include "winmodel.h"

/* Writes ff[0..n) and forwards the window end we; releases t[0..n) on success, discards
 * them and exits 1 on failure. */
void announce_window(struct stream_writer *out, const struct fr_file *ff, struct tmpfile *t,
		     int n, const struct frame *we);

/* The file frame of temporary file t, to be published as name for window index. */
struct fr_file announce_file(uint32_t index, uint32_t flags, const char *kind,
			     const char *name, const struct tmpfile *t);

/* Writes model m's window we to a temporary file t (its name in name[namelen], the file
 * prefix and kind given) and sets *ff; exits 1 on failure. */
typedef void (*announce_write_fn)(void *arg, struct winmodel *m, const char *prefix,
				  const char *kind, const struct fr_window_end *we,
				  struct tmpfile *t, struct fr_file *ff, char *name,
				  size_t namelen);

/* The window end f of an emitter with a CPU model and an off-CPU model (emit-svg,
 * emit-collapsed): ends each model that holds the window, has fn write it under the
 * prefixes "cpu" / "off-cpu" and kinds[0] / kinds[1], and announces the files.  src names
 * the input in errors. */
void announce_models(struct stream_writer *out, const char *src, struct winmodel *cpu,
		     struct winmodel *off, const char *const kinds[2], const struct frame *f,
		     announce_write_fn fn, void *arg);

#endif
