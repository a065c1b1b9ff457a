/*
 * The control-plane requests of container targets (manual: "Docker and Kubernetes
 * deployment"): one bounded HTTP GET, over the Docker Engine API's unix socket or over TLS to
 * the Kubernetes API server with the service account's CA and bearer token.  Every request
 * gives up after CTR_HTTP_TIMEOUT_MS and rejects an answer larger than CTR_HTTP_MAX_BODY;
 * each of both is its own one-line error.
 */
#ifndef COLLECT_CTRHTTP_H
#define COLLECT_CTRHTTP_H

#include <stddef.h>

#define CTR_HTTP_TIMEOUT_MS 5000
#define CTR_HTTP_MAX_BODY (4u << 20)

struct ctr_http {
	const char *unix_socket;        /* Docker: the socket; NULL for TCP */
	const char *ca_file;            /* TLS: the CA bundle the server is checked against */
	const char *bearer;             /* Authorization: Bearer ...; NULL for none */
	const char *want_header;        /* a response header to keep (e.g. "Api-Version") */
	long timeout_ms;                /* 0: CTR_HTTP_TIMEOUT_MS (tests may shorten it) */
	size_t max_body;                /* 0: CTR_HTTP_MAX_BODY */
};

struct ctr_reply {
	long status;                    /* the HTTP status */
	char *body;                     /* NUL-terminated, malloc'd */
	size_t len;
	char header[128];               /* the value of want_header, "" when absent */
};

/* GET url.  0 with a reply of any status (free body with ctr_reply_free), or -1 with err
 * when no complete answer came: the transport failed, the time ran out, or the answer was
 * too large. */
int ctr_http_get(const struct ctr_http *h, const char *url, struct ctr_reply *r, char *err,
		 size_t errlen);
void ctr_reply_free(struct ctr_reply *r);

#endif
