/*
 * Frame output: every frame goes to each writer; the first failure ends collect with the
 * writer's message, except for EPIPE on stdout: the stage reading it has stopped and
 * reported why, so collect stops quietly with status 3 (EMIT_EXIT_READER_GONE), which the
 * driver knows is not the cause of a failure.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "emit.h"

static void
check(struct stream_writer *w, int rc)
{
	if (rc < 0 && w->errnum == EPIPE && w->fd == STDOUT_FILENO)
		exit(EMIT_EXIT_READER_GONE); /* it says why; collect stops silently */
	if (rc < 0)
		errx(1, "cannot write %s: %s", w->name, w->err);
}

void
emit_open(struct emit *e, const struct stream_header *h, const char *save_path)
{
	e->n = 1;
	check(&e->w[0], stream_writer_open(&e->w[0], STDOUT_FILENO, "stdout", h));
	if (!save_path)
		return;
	int fd = open(save_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		err(1, "cannot create '%s'", save_path);
	check(&e->w[1], stream_writer_open(&e->w[1], fd, save_path, h));
	e->n = 2;
}

void
emit_flush(struct emit *e)
{
	for (int i = 0; i < e->n; i++)
		check(&e->w[i], stream_flush(&e->w[i]));
}

void
emit_close(struct emit *e)
{
	emit_flush(e);
	if (e->n == 2 && close(e->w[1].fd) < 0)
		err(1, "cannot write '%s'", e->w[1].name);
	for (int i = 0; i < e->n; i++)
		stream_writer_release(&e->w[i]);
	e->n = 0;
}

/* One wrapper per frame type: the same encoder for each writer. */
#define EMIT_FN(name, type)                                                    \
	void emit_##name(struct emit *e, const type *v)                        \
	{                                                                      \
		for (int i = 0; i < e->n; i++)                                 \
			check(&e->w[i], stream_put_##name(&e->w[i], v));       \
	}

EMIT_FN(target, struct fr_target)
EMIT_FN(mmap, struct fr_mmap)
EMIT_FN(comm, struct fr_comm)
EMIT_FN(sample, struct fr_sample)
EMIT_FN(sample_regs, struct fr_sample_regs)
EMIT_FN(lost, struct fr_lost)
EMIT_FN(ksym, struct fr_ksym)
EMIT_FN(round, struct fr_round)
EMIT_FN(target_exit, struct fr_target_exit)
EMIT_FN(end, struct fr_end)
EMIT_FN(warning, struct fr_warning)
EMIT_FN(offcpu, struct fr_offcpu)
EMIT_FN(alloc, struct fr_alloc)
EMIT_FN(heap_free, struct fr_heap_free)
EMIT_FN(heap_reset, struct fr_heap_reset)
EMIT_FN(page_alloc, struct fr_page_alloc)
EMIT_FN(page_free, struct fr_page_free)

void
emit_task(struct emit *e, uint32_t type, const struct fr_task *v)
{
	for (int i = 0; i < e->n; i++)
		check(&e->w[i], stream_put_task(&e->w[i], type, v));
}
