/*
 * Frame output of collect: the stream on stdout and, with --save-stream, the same frames in
 * a file.  A failed write is fatal (one line), so callers never check results.
 */
#ifndef COLLECT_EMIT_H
#define COLLECT_EMIT_H

/* collect's exit status when the stage reading its stdout went away (EPIPE). */
#define EMIT_EXIT_READER_GONE 3

#include "stream.h"

struct emit {
	struct stream_writer w[2];
	int n;                  /* writers in use: 1, or 2 with --save-stream */
};

/* Writes the header to fd 1 and, when save_path is set, to that file (created 0644). */
void emit_open(struct emit *e, const struct stream_header *h, const char *save_path);
void emit_flush(struct emit *e);
void emit_close(struct emit *e);

void emit_target(struct emit *e, const struct fr_target *v);
void emit_mmap(struct emit *e, const struct fr_mmap *v);
void emit_comm(struct emit *e, const struct fr_comm *v);
void emit_task(struct emit *e, uint32_t type, const struct fr_task *v);
void emit_sample(struct emit *e, const struct fr_sample *v);
void emit_sample_regs(struct emit *e, const struct fr_sample_regs *v);
void emit_lost(struct emit *e, const struct fr_lost *v);
void emit_ksym(struct emit *e, const struct fr_ksym *v);
void emit_round(struct emit *e, const struct fr_round *v);
void emit_target_exit(struct emit *e, const struct fr_target_exit *v);
void emit_end(struct emit *e, const struct fr_end *v);
void emit_warning(struct emit *e, const struct fr_warning *v);
void emit_offcpu(struct emit *e, const struct fr_offcpu *v);
void emit_alloc(struct emit *e, const struct fr_alloc *v);
void emit_heap_free(struct emit *e, const struct fr_heap_free *v);
void emit_heap_reset(struct emit *e, const struct fr_heap_reset *v);
void emit_page_alloc(struct emit *e, const struct fr_page_alloc *v);
void emit_page_free(struct emit *e, const struct fr_page_free *v);

#endif
