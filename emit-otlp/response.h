/*
 * What a receiver's answer means for one attempt (manual, "OTLP Profiles export"): HTTP
 * 2xx is success, partial when its ExportProfilesServiceResponse rejects profiles; 408,
 * 429, 502, 503 and 504 are worth another attempt (after Retry-After, when it is a number
 * of seconds); anything else, and a body over RESPONSE_MAX_BODY, ends the window's export.
 * Error bodies are google.rpc.Status messages; what is kept of their text is sanitized:
 * printable ASCII, one line, at most RESPONSE_MAX_ERROR bytes.  The bodies are untrusted
 * input (fuzz/otlp_response.c).
 */
#ifndef EO_RESPONSE_H
#define EO_RESPONSE_H

#include <stddef.h>
#include <stdint.h>

#define RESPONSE_MAX_BODY (1u << 20)    /* 1 MiB */
#define RESPONSE_MAX_ERROR 200
#define RESPONSE_MAX_RETRY_AFTER 30     /* seconds */

/* The export status of a window, as diagnostics name them. */
enum otlp_status {
	OTLP_PENDING = 1,
	OTLP_EXPORTED = 2,
	OTLP_PARTIAL = 3,
	OTLP_FAILED = 4,
	OTLP_DROPPED = 5,
	OTLP_SKIPPED = 6,
};

const char *otlp_status_name(unsigned status);      /* NULL for an unknown one */

struct verdict {
	int retry;              /* another attempt may succeed */
	unsigned status;        /* without retry: OTLP_EXPORTED, OTLP_PARTIAL or OTLP_FAILED */
	int64_t rejected;       /* rejected profiles of a partial success */
	int retry_after;        /* seconds the receiver asked to wait, -1 when none */
	char error[RESPONSE_MAX_ERROR + 1];     /* "" for a plain success */
};

/* Judges an answer: its HTTP status, its body (at most RESPONSE_MAX_BODY bytes kept;
 * oversized when more came) and its Retry-After header value (NULL when none).  The
 * receiver's text goes through redact (when not NULL) whole, before it is cut. */
void response_judge(long http, const uint8_t *body, size_t len, int oversized,
		    const char *retry_after, void (*redact)(void *arg, char *s), void *arg,
		    struct verdict *v);

/* s as printable ASCII on one line into out (size > 0): other bytes become '?', runs of
 * white space one space, and the text is cut at size - 1 bytes. */
void response_sanitize(char *out, size_t size, const char *s, size_t n);

#endif
