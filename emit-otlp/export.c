#include "export.h"

#include <curl/curl.h>
#include <errno.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "transport.h"

static int
prep_fail(struct exporter *x, const char *fmt, const char *a)
{
	snprintf(x->err, sizeof(x->err), fmt, a);
	return -1;
}

/* Appends file path to x->ca; a file with no PEM certificate is refused when required. */
static int
add_pem(struct exporter *x, const char *path, int required)
{
	FILE *f = fopen(path, "r");
	char buf[65536];
	size_t n;
	int certs = 0;
	X509 *c;

	if (!f)
		return required ? prep_fail(x, "--otlp-ca: cannot read '%s'", path) : 0;
	while ((c = PEM_read_X509(f, NULL, NULL, NULL))) {
		certs++;
		X509_free(c);
	}
	if (!certs) {
		fclose(f);
		return required ? prep_fail(x, "--otlp-ca: '%s' holds no PEM certificate", path)
				: 0;
	}
	rewind(f);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		char *p = realloc(x->ca, x->nca + n + 2);

		if (!p) {
			fclose(f);
			return prep_fail(x, "%s", "out of memory");
		}
		x->ca = p;
		memcpy(x->ca + x->nca, buf, n);
		x->nca += n;
	}
	x->ca[x->nca++] = '\n';
	fclose(f);
	return 0;
}

static int
add_header(struct exporter *x, const char *line)
{
	struct curl_slist *l = curl_slist_append(x->headers, line);

	if (!l)
		return prep_fail(x, "%s", "out of memory");
	x->headers = l;
	return 0;
}

int
exporter_prepare(struct exporter *x, const struct config *cfg)
{
	memset(x, 0, sizeof(*x));
	x->cfg = cfg;
	pthread_mutex_init(&x->mu, NULL);
	pthread_cond_init(&x->cv, NULL);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return prep_fail(x, "%s", "cannot initialise libcurl");
	if (cfg->https) {
		const curl_version_info_data *v = curl_version_info(CURLVERSION_NOW);

		if (add_pem(x, v->cainfo ? v->cainfo : "/etc/ssl/certs/ca-certificates.crt", 0) < 0 ||
		    (cfg->ca && add_pem(x, cfg->ca, 1) < 0))
			return -1;
	}
	if (add_header(x, "Content-Type: application/x-protobuf") < 0 ||
	    add_header(x, "Expect:") < 0 ||
	    (cfg->gzip && add_header(x, "Content-Encoding: gzip") < 0))
		return -1;
	for (size_t i = 0; i < cfg->nheaders; i++) {
		size_t n = strlen(cfg->headers[i].key) + strlen(cfg->headers[i].value) + 3;
		char *line = malloc(n);
		int rc;

		if (!line)
			return prep_fail(x, "%s", "out of memory");
		/* "Key;" is curl's way to send a header with an empty value. */
		if (cfg->headers[i].value[0])
			snprintf(line, n, "%s: %s", cfg->headers[i].key, cfg->headers[i].value);
		else
			snprintf(line, n, "%s;", cfg->headers[i].key);
		rc = add_header(x, line);
		memset(line, 0, n);
		free(line);
		if (rc < 0)
			return -1;
	}
	if (!(x->curl = curl_easy_init()))
		return prep_fail(x, "%s", "cannot initialise libcurl");
	return 0;
}

/* Waits ms milliseconds, or less when cancelled (x->mu held).  The flag is set by a
 * signal handler, which cannot signal the condition: it is looked at every 50 ms. */
static void
wait_ms(struct exporter *x, uint64_t ms)
{
	struct timespec now, t;
	uint64_t end, at;

	clock_gettime(CLOCK_REALTIME, &now);
	end = (uint64_t)now.tv_sec * 1000 + (uint64_t)now.tv_nsec / 1000000 + ms;
	while (!x->cancel) {
		clock_gettime(CLOCK_REALTIME, &now);
		at = (uint64_t)now.tv_sec * 1000 + (uint64_t)now.tv_nsec / 1000000;
		if (at >= end)
			return;
		at = end - at > 50 ? at + 50 : end;
		t = (struct timespec){ (time_t)(at / 1000), (long)(at % 1000) * 1000000 };
		pthread_cond_timedwait(&x->cv, &x->mu, &t);
	}
}

/* The wait before attempt k + 1: Retry-After when the receiver said, else the backoff,
 * doubled for each attempt, drawn in its upper half (the jitter). */
static uint64_t
backoff_ms(unsigned k, int retry_after)
{
	uint64_t d = (uint64_t)EXPORT_BACKOFF_MS << (k - 1);
	uint32_t r = 0;

	if (retry_after >= 0)
		return (uint64_t)retry_after * 1000;
	if (RAND_bytes((unsigned char *)&r, sizeof(r)) != 1)
		r = (uint32_t)time(NULL);
	return d / 2 + r % (d / 2 + 1);
}

/* Sends one window, attempt after attempt, into *res. */
static void
send_job(struct exporter *x, const struct export_job *j, struct export_result *res)
{
	struct verdict v;

	*res = (struct export_result){ .index = j->index, .status = OTLP_FAILED };
	for (unsigned k = 1; k <= EXPORT_MAX_ATTEMPTS; k++) {
		if (x->cancel)
			break;
		res->attempts = k;
		transport_attempt(x, j->body, j->len, &v);
		res->status = v.status;
		res->rejected = v.rejected;
		snprintf(res->error, sizeof(res->error), "%s", v.error);
		if (x->cancel) {
			res->status = OTLP_FAILED;
			snprintf(res->error, sizeof(res->error), "export cancelled at teardown");
			return;
		}
		if (!v.retry)
			return;
		res->status = OTLP_FAILED;
		if (k == EXPORT_MAX_ATTEMPTS)
			return;
		pthread_mutex_lock(&x->mu);
		wait_ms(x, backoff_ms(k, v.retry_after));
		pthread_mutex_unlock(&x->mu);
	}
	snprintf(res->error, sizeof(res->error), "export cancelled at teardown");
}

static void
put_result(struct exporter *x, const struct export_result *r)
{
	if (x->nres == x->cap_res) {
		size_t c = x->cap_res ? x->cap_res * 2 : 8;
		struct export_result *p = realloc(x->res, c * sizeof(*p));

		if (!p)
			return; /* out of memory: the window stays pending in its diagnostics */
		x->res = p;
		x->cap_res = c;
	}
	x->res[x->nres++] = *r;
}

static void *
thread_main(void *arg)
{
	struct exporter *x = arg;
	struct export_result r;

	pthread_mutex_lock(&x->mu);
	for (;;) {
		while (!x->n && !x->closing)
			pthread_cond_wait(&x->cv, &x->mu);
		if (!x->n)
			break;
		struct export_job j = x->q[x->head];
		pthread_mutex_unlock(&x->mu);
		send_job(x, &j, &r);
		free(j.body);
		pthread_mutex_lock(&x->mu);
		x->head = (x->head + 1) % EXPORT_QUEUE;
		x->n--;
		put_result(x, &r);
		pthread_cond_broadcast(&x->cv);
	}
	pthread_mutex_unlock(&x->mu);
	return NULL;
}

int
exporter_start(struct exporter *x)
{
	int e = pthread_create(&x->thread, NULL, thread_main, x);

	if (e)
		return prep_fail(x, "cannot start the export thread: %s", strerror(e));
	x->started = 1;
	return 0;
}

int
exporter_submit(struct exporter *x, uint32_t index, uint8_t *body, size_t len)
{
	int rc = -1;

	pthread_mutex_lock(&x->mu);
	if (x->n < EXPORT_QUEUE) {
		x->q[(x->head + x->n++) % EXPORT_QUEUE] = (struct export_job){ index, body, len };
		pthread_cond_broadcast(&x->cv);
		rc = 0;
	}
	pthread_mutex_unlock(&x->mu);
	if (rc < 0)
		free(body);
	return rc;
}

size_t
exporter_take(struct exporter *x, struct export_result **out)
{
	size_t n;

	pthread_mutex_lock(&x->mu);
	*out = x->res;
	n = x->nres;
	x->res = NULL;
	x->nres = x->cap_res = 0;
	pthread_mutex_unlock(&x->mu);
	return n;
}

void
exporter_finish(struct exporter *x)
{
	if (!x->started)
		return;
	pthread_mutex_lock(&x->mu);
	x->closing = 1;
	pthread_cond_broadcast(&x->cv);
	pthread_mutex_unlock(&x->mu);
	pthread_join(x->thread, NULL);
	x->started = 0;
}

void
exporter_cancel(struct exporter *x)
{
	/* A flag only (a signal handler calls this): the waits and transfers poll it. */
	x->cancel = 1;
}

void
exporter_release(struct exporter *x)
{
	exporter_finish(x);
	while (x->n) {
		free(x->q[x->head].body);
		x->head = (x->head + 1) % EXPORT_QUEUE;
		x->n--;
	}
	if (x->curl)
		curl_easy_cleanup(x->curl);
	curl_slist_free_all(x->headers);
	free(x->ca);
	free(x->res);
	x->curl = NULL, x->headers = NULL, x->ca = NULL, x->res = NULL;
}

int
exporter_full(struct exporter *x)
{
	int full;

	pthread_mutex_lock(&x->mu);
	full = x->n >= EXPORT_QUEUE;
	pthread_mutex_unlock(&x->mu);
	return full;
}

void
exporter_result(struct exporter *x, const struct export_result *r)
{
	pthread_mutex_lock(&x->mu);
	put_result(x, r);
	pthread_mutex_unlock(&x->mu);
}
