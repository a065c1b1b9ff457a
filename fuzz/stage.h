/*
 * Included by the targets that run a stage's main.c in-process, right before it: the system
 * headers a stage uses come first, so that only the stage's own calls of main and exit are
 * renamed (main is not the program's, exit gives up the input: see fuzz.h).  The emitters'
 * targets share fuzz_emitter: the skeleton's tee with the stage's callbacks.
 */
#ifndef RP_FUZZ_STAGE_H
#define RP_FUZZ_STAGE_H

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fuzz.h"
#include "emitter.h"

/* An emitter (lib/emitter.h) on one input, as its stage runs the tee on stdin: output to
 * /dev/null, files to a private directory emptied after each input.  The reader's order
 * rules stay off, so that the emitter's own checks of what it is given are fuzzed too.
 * options, when not NULL, sets the stage's options from the header's session id before
 * the stage's init, so that one corpus reaches all of them. */
static const struct emitter_ops *fuzz_ops;
static void (*fuzz_options)(uint64_t session_id);

static void __attribute__((unused))
fuzz_emitter_init(struct emitter *e)
{
	if (fuzz_options)
		fuzz_options(e->hdr.session_id);
	if (fuzz_ops->init)
		fuzz_ops->init(e);
}

static void __attribute__((unused))
fuzz_emitter_run(struct emitter *e, int fd)
{
	emitter_open(e, fd, fuzz_null_fd());
	e->in.order.rules = 0;
	emitter_loop(e);
}

static void __attribute__((unused))
fuzz_emitter(const struct emitter_ops *ops, void (*options)(uint64_t session_id),
	     const uint8_t *data, size_t size)
{
	static struct emitter e;        /* large, and FUZZ_TRY wants it static */
	static struct emitter_ops wrapped;
	int fd;

	if (!fuzz_dir[0]) {
		fuzz_outdir();
		fuzz_null_fd();
		fuzz_fd_sweep();
	}
	if ((fd = fuzz_input_fd(data, size)) < 0)
		return;
	fuzz_ops = ops;
	fuzz_options = options;
	wrapped = *ops;
	wrapped.init = fuzz_emitter_init;
	memset(&e, 0, sizeof(e));
	e.ops = &wrapped;
	e.output = fuzz_dir;
	FUZZ_TRY(fuzz_emitter_run(&e, fd));
	emitter_release(&e);
	fuzz_fd_sweep();
	fuzz_dir_clean();
}

#define main stage_main
#define exit(status) fuzz_exit(status)

#endif
