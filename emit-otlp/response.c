#include "response.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pbtypes.h"

#define RESPONSE_FN(f) \
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_response__##f

static const char *const names[] = {
	[OTLP_PENDING] = "pending", [OTLP_EXPORTED] = "exported", [OTLP_PARTIAL] = "partial",
	[OTLP_FAILED] = "failed", [OTLP_DROPPED] = "dropped", [OTLP_SKIPPED] = "skipped",
};

const char *
otlp_status_name(unsigned status)
{
	return status < sizeof(names) / sizeof(names[0]) ? names[status] : NULL;
}

void
response_sanitize(char *out, size_t size, const char *s, size_t n)
{
	size_t o = 0;

	for (size_t i = 0; i < n && s[i] && o + 1 < size; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
			if (o && out[o - 1] != ' ')
				out[o++] = ' ';
		} else {
			out[o++] = c > ' ' && c < 0x7f ? (char)c : '?';
		}
	}
	while (o && out[o - 1] == ' ')
		o--;
	out[o] = '\0';
}

/* An integer number of seconds, capped; -1 for anything else (an HTTP-date, say). */
static int
parse_retry_after(const char *s)
{
	long v = 0;

	if (!s)
		return -1;
	while (*s == ' ' || *s == '\t')
		s++;
	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++)
		if ((v = v * 10 + (*s - '0')) > RESPONSE_MAX_RETRY_AFTER)
			v = RESPONSE_MAX_RETRY_AFTER;
	while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
		s++;
	return *s ? -1 : (int)v;
}

struct redactor {
	void (*fn)(void *arg, char *s);
	void *arg;
};

/* The receiver's text m, redacted whole (in a copy: the decoded message is not ours to
 * change), then sanitized into out. */
static void
take_text(const struct redactor *r, const char *m, char *out, size_t size)
{
	char *copy = r->fn ? strdup(m) : NULL;

	if (copy)
		r->fn(r->arg, copy);
	response_sanitize(out, size, copy ? copy : r->fn ? "(out of memory)" : m,
			  strlen(copy ? copy : r->fn ? "(out of memory)" : m));
	free(copy);
}

/* The message of a google.rpc.Status body, or "" when the body is not one. */
static void
status_message(const struct redactor *rd, const uint8_t *body, size_t len, char *out,
	       size_t size)
{
	RpcStatus *st;

	out[0] = '\0';
	if (!len || !(st = google__rpc__status__unpack(NULL, len, body)))
		return;
	if (st->message)
		take_text(rd, st->message, out, size);
	google__rpc__status__free_unpacked(st, NULL);
}

static void
judge_success(const struct redactor *rd, const uint8_t *body, size_t len, struct verdict *v)
{
	OtResponse *r = len ? RESPONSE_FN(unpack)(NULL, len, body) : NULL;

	v->status = OTLP_EXPORTED;
	if (len && !r) {
		snprintf(v->error, sizeof(v->error), "the success answer's body is not an "
			 "ExportProfilesServiceResponse");
		return;
	}
	if (r && r->partial_success) {
		const char *m = r->partial_success->error_message;

		if (r->partial_success->rejected_profiles > 0) {
			v->status = OTLP_PARTIAL;
			v->rejected = r->partial_success->rejected_profiles;
		}
		if (m && m[0])
			take_text(rd, m, v->error, sizeof(v->error));
	}
	if (r)
		RESPONSE_FN(free_unpacked)(r, NULL);
}

void
response_judge(long http, const uint8_t *body, size_t len, int oversized,
	       const char *retry_after, void (*redact)(void *arg, char *s), void *arg,
	       struct verdict *v)
{
	const struct redactor rd = { redact, arg };
	char msg[RESPONSE_MAX_ERROR + 1];

	memset(v, 0, sizeof(*v));
	v->retry_after = -1;
	if (oversized) {
		v->status = OTLP_FAILED;
		snprintf(v->error, sizeof(v->error), "HTTP %ld with a body over 1 MiB", http);
		return;
	}
	if (http >= 200 && http < 300) {
		judge_success(&rd, body, len, v);
		return;
	}
	status_message(&rd, body, len, msg, sizeof(msg));
	v->retry = http == 408 || http == 429 || http == 502 || http == 503 || http == 504;
	v->status = OTLP_FAILED;
	if (v->retry)
		v->retry_after = parse_retry_after(retry_after);
	snprintf(v->error, sizeof(v->error), "HTTP %ld%s%.*s", http, msg[0] ? ": " : "",
		 RESPONSE_MAX_ERROR - 16, msg);
}
