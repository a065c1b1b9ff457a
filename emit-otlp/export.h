/*
 * The export beside the pipeline: one thread of its own sends the windows' requests, so a
 * slow or absent receiver never holds up the stream (and so never a pprof file).  The
 * main thread hands it each window's prepared body (encoded, gzipped when asked: made
 * once, sent as it is by every attempt) and picks up the results to pass on to commit.
 *
 *   queue     at most EXPORT_QUEUE windows held, the one being sent included; a window
 *             that finds it full is dropped (OTLP_DROPPED), its local files untouched
 *   attempts  at most EXPORT_MAX_ATTEMPTS, each with the configured timeout; another only
 *             after a transient transport failure (resolution, connection, I/O, timeout,
 *             a broken HTTP answer) or HTTP 408/429/502/503/504 (response.h), after an
 *             exponential backoff with jitter or the receiver's Retry-After (at most 30 s);
 *             waits and transfers end at once on exporter_cancel
 *   drain     exporter_finish: every queued window still goes, under the same rules
 *   cancel    exporter_cancel (abnormal teardown, async-signal-safe): retries stop, the
 *             window being sent and every queued one fail ("export cancelled")
 *
 * HTTPS trusts the system's roots and the --otlp-ca file, both read by exporter_prepare
 * before the stage is confined; no client certificate is ever sent.
 */
#ifndef EO_EXPORT_H
#define EO_EXPORT_H

#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "response.h"

#define EXPORT_QUEUE 4
#define EXPORT_MAX_ATTEMPTS 5
#define EXPORT_BACKOFF_MS 500   /* the first wait; each next one doubles */

struct export_result {
	uint32_t index;
	unsigned status;        /* enum otlp_status */
	uint32_t attempts;
	int64_t rejected;
	char error[RESPONSE_MAX_ERROR + 1];
};

struct export_job {
	uint32_t index;
	uint8_t *body;
	size_t len;
};

struct exporter {
	const struct config *cfg;
	void *curl;             /* CURL *, used by the thread only */
	struct curl_slist *headers;
	char *ca;               /* the system roots and the --otlp-ca file, PEM */
	size_t nca;
	pthread_t thread;
	int started;
	pthread_mutex_t mu;
	pthread_cond_t cv;      /* a job, the end, a cancel, a result */
	struct export_job q[EXPORT_QUEUE];
	size_t head, n;         /* n counts the job being sent */
	struct export_result *res;
	size_t nres, cap_res;
	int closing;
	volatile sig_atomic_t cancel;
	char err[300];
};

/* Before the confinement: libcurl, the CA file, the request headers.  0, or -1 with one
 * line in x->err. */
int exporter_prepare(struct exporter *x, const struct config *cfg);
/* After it: the thread.  0, or -1 with x->err. */
int exporter_start(struct exporter *x);
/* Queues a window's body (taking it: freed once sent); 0 when it was queued, -1 when the
 * queue was full (the body is freed). */
int exporter_submit(struct exporter *x, uint32_t index, uint8_t *body, size_t len);
/* The queue holds EXPORT_QUEUE windows (only the caller of exporter_submit adds). */
int exporter_full(struct exporter *x);
/* A result of the caller's own (a window that could not be encoded), passed on with the
 * thread's. */
void exporter_result(struct exporter *x, const struct export_result *r);
/* The results finished since the last call, oldest first, into *out (the caller frees);
 * their count. */
size_t exporter_take(struct exporter *x, struct export_result **out);
/* No more windows: waits until every queued one has been sent (or cancelled). */
void exporter_finish(struct exporter *x);
void exporter_cancel(struct exporter *x);
void exporter_release(struct exporter *x);

#endif
