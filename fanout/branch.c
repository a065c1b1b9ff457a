#include "branch.h"

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grow.h"

void
ret_free(struct ret *r)
{
	rawbuf_free(&r->files);
	for (size_t i = 0; i < r->nstats; i++)
		free(r->stats[i].key);
	free(r->stats);
	*r = (struct ret){ 0 };
}

static void
fail(struct branch *b, const char *fmt, const char *detail)
{
	pthread_mutex_lock(&b->mu);
	if (!b->dead) {
		b->dead = 1;
		snprintf(b->err, sizeof(b->err), fmt, detail);
	}
	pthread_cond_broadcast(&b->cv);
	pthread_mutex_unlock(&b->mu);
}

/* Writes queued frames as they come; blocks only this thread when the emitter is slow. */
static void *
writer_main(void *arg)
{
	struct branch *b = arg;
	struct stream_writer w;
	struct rawbuf chunk = { 0 };

	if (stream_writer_open(&w, b->in_fd, b->name, &b->hdr) < 0 || stream_flush(&w) < 0) {
		fail(b, "cannot write to it: %s", w.err);
		close(b->in_fd);
		return NULL;
	}
	for (;;) {
		pthread_mutex_lock(&b->mu);
		while (b->queue.len == 0 && !b->closing && !b->dead)
			pthread_cond_wait(&b->cv, &b->mu);
		struct rawbuf take = b->queue;
		b->queue = chunk;
		b->queue.len = 0;
		int closing = b->closing, dead = b->dead;
		pthread_mutex_unlock(&b->mu);
		chunk = take;
		struct frame f;
		for (size_t off = 0; !dead && rawbuf_next(&chunk, &off, &f);) {
			if (stream_forward(&w, &f) < 0) {
				fail(b, "cannot write to it: %s", w.err);
				dead = 1;
			}
		}
		chunk.len = 0;
		if (!dead && stream_flush(&w) < 0) {
			fail(b, "cannot write to it: %s", w.err);
			dead = 1;
		}
		if (dead || closing) {
			pthread_mutex_lock(&b->mu);
			int more = b->queue.len > 0 && !b->dead;
			pthread_mutex_unlock(&b->mu);
			if (more)
				continue;
			break;
		}
	}
	stream_writer_release(&w);
	rawbuf_free(&chunk);
	close(b->in_fd);
	return NULL;
}

static void
keep_stats(struct ret *r, const struct fr_window_end *we)
{
	r->stats = calloc(we->nstats ? we->nstats : 1, sizeof(*r->stats));
	if (!r->stats)
		errx(1, "out of memory");
	for (uint16_t i = 0; i < we->nstats; i++) {
		r->stats[i].key = strndup(we->stats[i].key.p, we->stats[i].key.len);
		if (!r->stats[i].key)
			errx(1, "out of memory");
		r->stats[i].value = we->stats[i].value;
	}
	r->nstats = we->nstats;
}

/* Collects the emitter's file frames and window ends; everything else it passes through
 * is the stream fanout sent it, already forwarded on the main path. */
static void *
reader_main(void *arg)
{
	static _Thread_local struct fr_window_end we; /* large; one per thread */
	struct branch *b = arg;
	struct stream_reader r;
	struct stream_header h;
	struct frame f;
	struct ret cur = { 0 };
	char e[200];
	int rc;

	if (stream_reader_open(&r, b->out_fd, b->name, &h) < 0) {
		fail(b, "%s", r.err);
		close(b->out_fd);
		return NULL;
	}
	r.order.rules = ORDER_WINDOW_GAPS; /* the windows fanout shed for it are missing */
	while ((rc = stream_read(&r, &f)) > 0) {
		if (f.type == FR_FILE) {
			rawbuf_put(&cur.files, f.type, f.data, f.len);
			cur.nfiles++;
		} else if (f.type == FR_WINDOW_END) {
			if (stream_get_window_end(&f, &we, e, sizeof(e)) < 0) {
				fail(b, "%s", e);
				break;
			}
			cur.index = we.index;
			keep_stats(&cur, &we);
			pthread_mutex_lock(&b->mu);
			if (grow_array((void **)&b->rets, &b->caprets, b->nrets, 1,
				       sizeof(*b->rets)) < 0)
				errx(1, "out of memory");
			b->rets[b->nrets++] = cur;
			b->returned++;
			b->files_per_window = cur.nfiles;
			pthread_cond_broadcast(&b->cv);
			pthread_mutex_unlock(&b->mu);
			cur = (struct ret){ 0 };
		}
	}
	if (rc < 0)
		fail(b, "%s", r.err);
	pthread_mutex_lock(&b->mu);
	b->done = 1;
	pthread_cond_broadcast(&b->cv);
	pthread_mutex_unlock(&b->mu);
	ret_free(&cur);
	stream_reader_release(&r);
	close(b->out_fd);
	return NULL;
}

void
branch_open(struct branch *b)
{
	if ((b->in_fd = open(b->in_path, O_WRONLY | O_CLOEXEC)) < 0)
		err(1, "cannot open '%s'", b->in_path);
	if ((b->out_fd = open(b->out_path, O_RDONLY | O_CLOEXEC)) < 0)
		err(1, "cannot open '%s'", b->out_path);
}

void
branch_start(struct branch *b, const struct stream_header *h)
{
	b->hdr = *h;
	b->files_per_window = 1;
	pthread_mutex_init(&b->mu, NULL);
	pthread_cond_init(&b->cv, NULL);
	if (pthread_create(&b->writer, NULL, writer_main, b) != 0 ||
	    pthread_create(&b->reader, NULL, reader_main, b) != 0)
		errx(1, "cannot start the threads for %s", b->name);
}

void
branch_send(struct branch *b, const struct rawbuf *frames, int whole_window)
{
	pthread_mutex_lock(&b->mu);
	if (!b->dead) {
		if (grow_array((void **)&b->queue.p, &b->queue.cap, b->queue.len, frames->len,
			       1) < 0)
			errx(1, "out of memory");
		memcpy(b->queue.p + b->queue.len, frames->p, frames->len);
		b->queue.len += frames->len;
	}
	b->submitted += (uint64_t)whole_window;
	pthread_cond_broadcast(&b->cv);
	pthread_mutex_unlock(&b->mu);
}

void
branch_close(struct branch *b)
{
	pthread_mutex_lock(&b->mu);
	b->closing = 1;
	pthread_cond_broadcast(&b->cv);
	pthread_mutex_unlock(&b->mu);
}

void
branch_join(struct branch *b)
{
	pthread_join(b->writer, NULL);
	pthread_join(b->reader, NULL);
	for (size_t i = 0; i < b->nrets; i++)
		ret_free(&b->rets[i]);
	free(b->rets);
	rawbuf_free(&b->queue);
	pthread_cond_destroy(&b->cv);
	pthread_mutex_destroy(&b->mu);
}
