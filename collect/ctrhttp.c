/*
 * libcurl, one easy handle per request: these requests are few (target resolution, and a
 * poll while a container is down), so nothing is kept between them.  The answer's size is
 * bounded twice: by Content-Length before any byte is read, and by counting what arrives
 * (a chunked answer announces nothing).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ctrhttp.h"
#include "curlso.h"
#include "errbuf.h"

struct sink {
	struct ctr_reply *r;
	size_t cap, max;
	int too_large, oom;
	const char *want;
};

static size_t
on_body(char *data, size_t size, size_t nmemb, void *arg)
{
	struct sink *s = arg;
	size_t n = size * nmemb;
	if (s->r->len + n > s->max) {
		s->too_large = 1;
		return 0;
	}
	if (s->r->len + n + 1 > s->cap) {
		size_t cap = s->cap ? s->cap : 4096;
		while (cap < s->r->len + n + 1)
			cap *= 2;
		char *p = realloc(s->r->body, cap);
		if (!p) {
			s->oom = 1;
			return 0;
		}
		s->r->body = p;
		s->cap = cap;
	}
	memcpy(s->r->body + s->r->len, data, n);
	s->r->len += n;
	s->r->body[s->r->len] = 0;
	return n;
}

/* "Name: value\r\n": keeps the value of the header asked for. */
static size_t
on_header(char *data, size_t size, size_t nmemb, void *arg)
{
	struct sink *s = arg;
	size_t n = size * nmemb, k = s->want ? strlen(s->want) : 0;
	if (k && n > k + 1 && strncasecmp(data, s->want, k) == 0 && data[k] == ':') {
		const char *v = data + k + 1;
		size_t vl = n - k - 1;
		while (vl && (*v == ' ' || *v == '\t'))
			v++, vl--;
		while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n' || v[vl - 1] == ' '))
			vl--;
		if (vl >= sizeof(s->r->header))
			vl = sizeof(s->r->header) - 1;
		memcpy(s->r->header, v, vl);
		s->r->header[vl] = 0;
	}
	return n;
}

static int
setup(const struct curl_so *so, CURL *c, const struct ctr_http *h, const char *url,
      struct sink *s, struct curl_slist **hdrs)
{
	long timeout = h->timeout_ms > 0 ? h->timeout_ms : CTR_HTTP_TIMEOUT_MS;
	int bad = 0;
	bad |= so->easy_setopt(c, CURLOPT_URL, url) != CURLE_OK;
	bad |= so->easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout) != CURLE_OK;
	bad |= so->easy_setopt(c, CURLOPT_NOSIGNAL, 1L) != CURLE_OK;
	bad |= so->easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)s->max) != CURLE_OK;
	bad |= so->easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body) != CURLE_OK;
	bad |= so->easy_setopt(c, CURLOPT_WRITEDATA, s) != CURLE_OK;
	bad |= so->easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header) != CURLE_OK;
	bad |= so->easy_setopt(c, CURLOPT_HEADERDATA, s) != CURLE_OK;
	bad |= so->easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK;
	bad |= so->easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L) != CURLE_OK;
	if (h->unix_socket)
		bad |= so->easy_setopt(c, CURLOPT_UNIX_SOCKET_PATH, h->unix_socket) != CURLE_OK;
	if (h->ca_file)
		bad |= so->easy_setopt(c, CURLOPT_CAINFO, h->ca_file) != CURLE_OK;
	*hdrs = so->slist_append(NULL, "Accept: application/json");
	if (h->bearer && *hdrs) {
		char *line = malloc(strlen(h->bearer) + 32);
		if (line) {
			sprintf(line, "Authorization: Bearer %s", h->bearer);
			struct curl_slist *n = so->slist_append(*hdrs, line);
			free(line);
			*hdrs = n ? n : *hdrs;
			bad |= !n;
		} else {
			bad = 1;
		}
	}
	bad |= !*hdrs || so->easy_setopt(c, CURLOPT_HTTPHEADER, *hdrs) != CURLE_OK;
	return bad ? -1 : 0;
}

/* The failure in words: the bounds by name, the rest as curl says it. */
static int
failure(const struct curl_so *so, CURLcode rc, const struct sink *s,
	const struct ctr_http *h, const char *errtext, char *err, size_t errlen)
{
	long timeout = h->timeout_ms > 0 ? h->timeout_ms : CTR_HTTP_TIMEOUT_MS;
	if (s->too_large || rc == CURLE_FILESIZE_EXCEEDED)
		return errbuf_fail(err, errlen, "the answer is larger than %zu bytes (the limit "
				   "of control-plane responses)", s->max);
	if (s->oom)
		return errbuf_fail(err, errlen, "out of memory reading the answer");
	if (rc == CURLE_OPERATION_TIMEDOUT)
		return errbuf_fail(err, errlen, "no complete answer within %ld ms (the "
				   "control-plane timeout)", timeout);
	return errbuf_fail(err, errlen, "%s", errtext[0] ? errtext : so->easy_strerror(rc));
}

int
ctr_http_get(const struct ctr_http *h, const char *url, struct ctr_reply *r, char *err,
	     size_t errlen)
{
	char errtext[CURL_ERROR_SIZE] = "";
	struct curl_slist *hdrs = NULL;
	struct sink s = { .r = r, .max = h->max_body ? h->max_body : CTR_HTTP_MAX_BODY,
			  .want = h->want_header };

	memset(r, 0, sizeof(*r));
	const struct curl_so *so = curl_so(err, errlen);
	if (!so)
		return -1;
	CURL *c = so->easy_init();
	if (!c)
		return errbuf_fail(err, errlen, "cannot initialise libcurl");
	int rc = -1;
	if (setup(so, c, h, url, &s, &hdrs) < 0) {
		errbuf_fail(err, errlen, "cannot set up the request");
	} else {
		so->easy_setopt(c, CURLOPT_ERRORBUFFER, errtext);
		CURLcode cr = so->easy_perform(c);
		if (cr == CURLE_OK) {
			so->easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
			rc = 0;
		} else {
			failure(so, cr, &s, h, errtext, err, errlen);
		}
	}
	so->slist_free_all(hdrs);
	so->easy_cleanup(c);
	if (rc == 0 && !r->body && !(r->body = calloc(1, 1)))
		rc = errbuf_fail(err, errlen, "out of memory");
	if (rc < 0)
		ctr_reply_free(r);
	return rc;
}

void
ctr_reply_free(struct ctr_reply *r)
{
	free(r->body);
	r->body = NULL;
	r->len = 0;
}
