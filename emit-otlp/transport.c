#include "transport.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "export.h"

/* The answer as it arrives: its body up to the cap, its Retry-After. */
struct answer {
	uint8_t *body;
	size_t len;
	int oversized;
	char retry_after[64];
	int have_retry_after;
};

static size_t
on_body(char *p, size_t size, size_t n, void *arg)
{
	struct answer *a = arg;
	size_t k = size * n;

	if (a->len + k > RESPONSE_MAX_BODY) {
		a->oversized = 1;
		return 0;       /* stops the transfer: an oversized answer is not read on */
	}
	uint8_t *b = realloc(a->body, a->len + k + 1);
	if (!b)
		return 0;
	a->body = b;
	memcpy(a->body + a->len, p, k);
	a->len += k;
	return k;
}

static size_t
on_header(char *p, size_t size, size_t n, void *arg)
{
	struct answer *a = arg;
	size_t k = size * n;

	/* Each answer's headers start with its status line: a new one forgets the last. */
	if (k >= 5 && !strncasecmp(p, "HTTP/", 5))
		a->have_retry_after = 0;
	if (k > 12 && !strncasecmp(p, "Retry-After:", 12)) {
		snprintf(a->retry_after, sizeof(a->retry_after), "%.*s", (int)(k - 12 < 63 ? k - 12 : 63),
			 p + 12);
		a->have_retry_after = 1;
	}
	return k;
}

static int
on_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	const struct exporter *x = arg;

	(void)dt, (void)dn, (void)ut, (void)un;
	return x->cancel != 0;
}

static void
redact(void *cfg, char *s)
{
	config_redact(cfg, s);
}

static void
set_options(struct exporter *x, CURL *c, const uint8_t *body, size_t len, struct answer *a,
	    char *errbuf)
{
	const struct config *cfg = x->cfg;

	curl_easy_reset(c);
	curl_easy_setopt(c, CURLOPT_URL, cfg->url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	/* No proxy, whatever the environment says: the stage may connect to its endpoint's
	 * port only (docs/otlp.md). */
	curl_easy_setopt(c, CURLOPT_PROXY, "");
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_POST, 1L);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, (const char *)body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, x->headers);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "rustprofile-emit-otlp");
	curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "gzip");
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)cfg->timeout_ms);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)cfg->timeout_ms);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, a);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, a);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, x);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	if (cfg->https) {
		/* The roots were read before the confinement: no file is opened now. */
		struct curl_blob blob = { x->ca, x->nca, CURL_BLOB_NOCOPY };

		curl_easy_setopt(c, CURLOPT_CAINFO, NULL);
		curl_easy_setopt(c, CURLOPT_CAPATH, NULL);
		if (x->nca)
			curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &blob);
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
	}
}

/* Worth another attempt: the transfer failed on the way, not on what was configured. */
static int
transient(CURLcode rc)
{
	switch (rc) {
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_RESOLVE_PROXY:
	case CURLE_COULDNT_CONNECT:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_WEIRD_SERVER_REPLY:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
	case CURLE_HTTP3:
		return 1;
	default:
		return 0;
	}
}

void
transport_attempt(struct exporter *x, const uint8_t *body, size_t len, struct verdict *v)
{
	struct answer a = { 0 };
	char errbuf[CURL_ERROR_SIZE] = "", msg[CURL_ERROR_SIZE + 64];
	CURL *c = x->curl;
	long http = 0;

	set_options(x, c, body, len, &a, errbuf);
	CURLcode rc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &http);
	if (rc == CURLE_OK || (rc == CURLE_WRITE_ERROR && a.oversized && http)) {
		response_judge(http, a.body, a.len, a.oversized,
			       a.have_retry_after ? a.retry_after : NULL, redact, (void *)x->cfg, v);
	} else {
		memset(v, 0, sizeof(*v));
		v->status = OTLP_FAILED;
		v->retry_after = -1;
		v->retry = transient(rc);
		snprintf(msg, sizeof(msg), "%s%s%s", curl_easy_strerror(rc), errbuf[0] ? ": " : "",
			 errbuf);
		config_redact(x->cfg, msg);
		response_sanitize(v->error, sizeof(v->error), msg, strlen(msg));
	}
	free(a.body);
}
