/*
 * One derived emitter fed by fanout: a writer thread copies queued windows into the
 * emitter's input, a reader thread collects what the emitter gives back (its file frames
 * and window ends).  The main thread never blocks on an emitter: a stopped or slow one
 * only makes later windows skip it (fanout/main.c decides).
 */
#ifndef FANOUT_BRANCH_H
#define FANOUT_BRANCH_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "rawbuf.h"
#include "stream.h"

/* A statistic of a returned window end, copied. */
struct kv {
	char *key;
	uint64_t value;
};

/* What the emitter gave back for one window it was sent. */
struct ret {
	uint32_t index;
	struct rawbuf files;    /* its FR_FILE frames */
	size_t nfiles;
	struct kv *stats;
	size_t nstats;
};

struct branch {
	const char *name;       /* the emitter, for messages */
	const char *in_path, *out_path;
	int in_fd, out_fd;
	struct stream_header hdr;
	pthread_t writer, reader;
	pthread_mutex_t mu;
	pthread_cond_t cv;      /* queue filled / closed (writer); returns and ends (main) */
	struct rawbuf queue;    /* frames not yet written to the emitter */
	int closing;            /* no frames follow the queue */
	uint64_t submitted;     /* windows sent (or queued) whole */
	uint64_t returned;      /* window ends the emitter gave back */
	struct ret *rets;       /* returned, not yet taken, oldest first */
	size_t nrets, caprets;
	size_t files_per_window; /* files in the last returned window (1 before any) */
	uint64_t discard;       /* windows published without it: what it gives back for them
				 * is thrown away (fanout --max-pending-windows) */
	int done;               /* the emitter's output ended cleanly */
	int dead;               /* it failed or went away: err says how */
	char err[256];
};

/* Opens the two FIFOs (the emitter's input first, as it opens them); exits with a message
 * on failure.  Done before anything else: an emitter waits in open() for fanout, and would
 * wait forever if fanout stopped (bad input) before opening them. */
void branch_open(struct branch *b);
/* Starts the threads once the stream header is known. */
void branch_start(struct branch *b, const struct stream_header *h);
/* Queues frames for the emitter (the caller holds no lock). */
void branch_send(struct branch *b, const struct rawbuf *frames, int whole_window);
/* No more frames: the writer closes the emitter's input once the queue is written. */
void branch_close(struct branch *b);
/* Waits for both threads. */
void branch_join(struct branch *b);
void ret_free(struct ret *r);

#endif
