/* http: the libmicrohttpd handler: limits, bearer token, CORS and the routes (docs/serve.md). */
#ifndef RP_SERVE_HTTP_H
#define RP_SERVE_HTTP_H

#include "serve.h"

/* Starts answering on the listening socket fd with one internal thread.  0, or -1. */
int http_start(struct serve *, int fd);
void http_stop(void);

/* 1 when the Authorization header value carries the token (compared in constant time). */
int http_token_ok(const char *header, const char *token);

#endif
