/* http: serving requests through libmicrohttpd (see http.h). */
#include "http.h"

#include <jansson.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dbgfetch.h"
#include "gallery.h"
#include "symapi.h"

static struct MHD_Daemon *daemon_;

struct req {
	char *body;
	size_t len;
	int too_big;
};

int
http_token_ok(const char *h, const char *token)
{
	const char *p = "Bearer ";
	size_t n, t = strlen(token), i;
	unsigned diff = 0;

	if (!h || strncmp(h, p, strlen(p)) != 0)
		return 0;
	h += strlen(p);
	n = strlen(h);
	/* every byte of the token is looked at whatever the header holds */
	for (i = 0; i < t; i++)
		diff |= (unsigned char)token[i] ^ (unsigned char)(i < n ? h[i] : 0);
	return diff == 0 && n == t;
}

/* Access-Control-Request-Headers echoed back: header names and commas only. */
static const char *
safe_headers(const char *h)
{
	if (!h || strlen(h) > 1000)
		return "Content-Type";
	for (const char *p = h; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || strchr("-_, ", *p)))
			return "Content-Type";
	return h;
}

static int
origin_ok(struct serve *s, struct MHD_Connection *c)
{
	const char *o = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");

	return s->cors_origin && o && strcmp(o, s->cors_origin) == 0;
}

static enum MHD_Result
reply(struct serve *s, struct MHD_Connection *c, struct answer *a, int persistent)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
		a->len, a->body, persistent ? MHD_RESPMEM_PERSISTENT : MHD_RESPMEM_MUST_FREE);
	enum MHD_Result rc;

	if (!r) {
		if (!persistent)
			free(a->body);
		return MHD_NO;
	}
	a->body = NULL;
	if (a->type)
		MHD_add_response_header(r, "Content-Type", a->type);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	if (origin_ok(s, c)) {
		MHD_add_response_header(r, "Access-Control-Allow-Origin", s->cors_origin);
		MHD_add_response_header(r, "Vary", "Origin");
	}
	if (a->status == 401)
		MHD_add_response_header(r, "WWW-Authenticate", "Bearer");
	if (a->status == 405)
		MHD_add_response_header(r, "Allow", "GET, POST");
	if (a->status >= 400)
		s->refused++;
	rc = MHD_queue_response(c, a->status, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result
preflight(struct serve *s, struct MHD_Connection *c)
{
	struct answer a = { 0 };
	struct MHD_Response *r;
	enum MHD_Result rc;

	if (!origin_ok(s, c)) {
		answer_error(&a, 405, "OPTIONS: CORS is off%s", s->cors_origin ?
			     " for this origin" : " (see --cors-origin)");
		return reply(s, c, &a, 0);
	}
	if (!(r = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT)))
		return MHD_NO;
	MHD_add_response_header(r, "Access-Control-Allow-Origin", s->cors_origin);
	MHD_add_response_header(r, "Vary", "Origin");
	MHD_add_response_header(r, "Access-Control-Allow-Methods", "GET, POST, OPTIONS");
	MHD_add_response_header(r, "Access-Control-Allow-Headers",
		safe_headers(MHD_lookup_connection_value(c, MHD_HEADER_KIND,
							 "Access-Control-Request-Headers")));
	MHD_add_response_header(r, "Access-Control-Max-Age", "86400");
	rc = MHD_queue_response(c, 204, r);
	MHD_destroy_response(r);
	return rc;
}

/* The server's figures, and with --debuginfod what its fetches came to. */
static void
healthz(struct serve *s, struct answer *a)
{
	json_t *o = json_pack("{s:s, s:I, s:I}", "status", "ok",
			      "requests", (json_int_t)s->requests,
			      "refused", (json_int_t)s->refused);
	if (s->fetch) {
		const struct dbgfetch_stats *f = dbgfetch_stats(s->fetch);
		json_object_set_new(o, "debuginfod",
			json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
			"queried", (json_int_t)f->queried, "requests", (json_int_t)f->requests,
			"fetched", (json_int_t)f->fetched, "not_found", (json_int_t)f->not_found,
			"oversized", (json_int_t)f->oversized, "out_of_time", (json_int_t)f->out_of_time,
			"failed", (json_int_t)f->failed, "bytes_fetched", (json_int_t)f->bytes_fetched));
	}
	answer_json(a, o);
}

/* GET and HEAD. */
static int
route_get(struct serve *s, const char *url, struct answer *a)
{
	if (strcmp(url, "/healthz") == 0)
		healthz(s, a);
	else if (s->profile && strcmp(url, "/profile.json") == 0) {
		a->body = (char *)s->data;
		a->len = s->len;
		a->status = 200;
		a->type = s->jslb ? "application/octet-stream" : "application/json";
		return 1;	/* persistent */
	} else if (s->directory && strcmp(url, "/") == 0)
		gallery_page(s, a);
	else if (s->directory && strcmp(url, "/api/profiles") == 0)
		gallery_list(s, a);
	else if (s->directory && strncmp(url, "/api/profile/", 13) == 0)
		gallery_profile(s, url + 13, a);
	else if (s->profile && strcmp(url, "/") == 0) {
		char link[5000], *text = NULL;
		gallery_firefox_url(s, "/profile.json", link, sizeof(link));
		if (asprintf(&text, "rustprofile serve: the profile is at %s/profile.json\n"
			     "Firefox Profiler (with --cors-origin https://profiler.firefox.com): "
			     "%s\n", s->base_url, link) < 0)
			text = NULL;
		a->body = text;
		a->len = text ? strlen(text) : 0;
		a->status = text ? 200 : 500;
		a->type = "text/plain; charset=utf-8";
	} else
		answer_error(a, 404, "no such resource: %.200s", url);
	return 0;
}

static void
route_post(struct serve *s, const char *url, const struct req *q, struct answer *a)
{
	dbgfetch_new_budget(s->fetch);
	if (strcmp(url, "/symbolicate/v5") == 0)
		symapi_symbolicate(s, q->body ? q->body : "", q->len, a);
	else if (strcmp(url, "/source/v1") == 0)
		symapi_source(s, q->body ? q->body : "", q->len, a);
	else if (strcmp(url, "/asm/v1") == 0)
		symapi_asm(s, q->body ? q->body : "", q->len, a);
	else if (strcmp(url, "/healthz") == 0 || strcmp(url, "/profile.json") == 0 ||
		 strcmp(url, "/api/profiles") == 0 || strcmp(url, "/") == 0)
		answer_error(a, 405, "POST is not allowed here");
	else
		answer_error(a, 404, "no such resource: %.200s", url);
}

/* Collects a POST body; 0 while more is due, 1 when complete, -1 when over the cap. */
static int
collect_body(struct req *q, const char *data, size_t *size)
{
	if (*size == 0)
		return q->too_big ? -1 : 1;
	if (!q->too_big && q->len + *size <= SERVE_MAX_BODY) {
		char *n = realloc(q->body, q->len + *size + 1);
		if (n) {
			memcpy(n + q->len, data, *size);
			q->body = n;
			q->len += *size;
			n[q->len] = 0;
		} else
			q->too_big = 1;
	} else
		q->too_big = 1;
	*size = 0;
	return 0;
}

static enum MHD_Result
handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
       const char *version, const char *data, size_t *size, void **state)
{
	struct serve *s = cls;
	struct req *q = *state;
	struct answer a = { 0 };
	int post = strcmp(method, "POST") == 0, persistent = 0;

	(void)version;
	if (!q) {
		if (!(q = calloc(1, sizeof(*q))))
			return MHD_NO;
		*state = q;
		s->requests++;
		const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
							     "Content-Length");
		if (!post || !cl || strtoull(cl, NULL, 10) <= SERVE_MAX_BODY)
			return MHD_YES;
		q->too_big = 1;		/* answered at once, the body never read */
	} else if (post) {
		int done = collect_body(q, data, size);
		if (done == 0)
			return MHD_YES;
	}
	if (strcmp(method, "OPTIONS") == 0)
		return preflight(s, c);
	if (s->token && strcmp(url, "/healthz") != 0 &&
	    !http_token_ok(MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization"),
			   s->token))
		answer_error(&a, 401, "a bearer token is required");
	else if (post && q->too_big)
		answer_error(&a, 413, "the request body passes %u bytes", SERVE_MAX_BODY);
	else if (post)
		route_post(s, url, q, &a);
	else if (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0)
		persistent = route_get(s, url, &a);
	else
		answer_error(&a, 405, "method %.20s is not allowed", method);
	return reply(s, c, &a, persistent);
}

static void
done(void *cls, struct MHD_Connection *c, void **state, enum MHD_RequestTerminationCode t)
{
	struct req *q = *state;

	(void)cls, (void)c, (void)t;
	if (q)
		free(q->body);
	free(q);
	*state = NULL;
}

int
http_start(struct serve *s, int fd)
{
	daemon_ = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, 0,
				   NULL, NULL, handle, s,
				   MHD_OPTION_LISTEN_SOCKET, fd,
				   MHD_OPTION_NOTIFY_COMPLETED, done, NULL,
				   MHD_OPTION_CONNECTION_LIMIT, (unsigned)64,
				   MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)60,
				   MHD_OPTION_END);
	return daemon_ ? 0 : -1;
}

void
http_stop(void)
{
	if (daemon_)
		MHD_stop_daemon(daemon_);
	daemon_ = NULL;
}
