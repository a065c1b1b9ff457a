/* libFuzzer target: emit-otlp's reading of a receiver's answer (emit-otlp/response.c): the
 * google.rpc.Status body of an error, the ExportProfilesServiceResponse of a success (its
 * partial success) and the Retry-After value, as an untrusted receiver sends them.
 *
 * Input: 2 bytes of HTTP status (little-endian, modulo 600), 1 byte of flags (bit 0: the
 * body was over the cap), a Retry-After value up to a NUL byte (none without one), then
 * the body.  The verdict must be one of the three final statuses, retried only for 408,
 * 429 and 502-504, wait at most 30 s, and carry an error of printable ASCII inside its
 * bound in which the redacted secret never appears, wherever the body put it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../emit-otlp/config.h"
#include "../emit-otlp/response.h"

static const char secret[] = "s3cr3t-header-value";

static void
redact(void *arg, char *s)
{
	(void)arg;
	for (char *p; (p = strstr(s, secret));) {
		memmove(p + 3, p + sizeof(secret) - 1, strlen(p + sizeof(secret) - 1) + 1);
		memcpy(p, "***", 3);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct verdict v;
	char ra[64];
	const char *retry_after = NULL;
	size_t off = 3;
	long http;

	if (size < 3)
		return 0;
	http = (data[0] | data[1] << 8) % 600;
	const uint8_t *nul = memchr(data + 3, 0, size - 3 < 64 ? size - 3 : 64);
	if (nul) {
		memcpy(ra, data + 3, (size_t)(nul - data - 3));
		ra[nul - data - 3] = '\0';
		retry_after = ra;
		off = (size_t)(nul - data) + 1;
	}
	/* A copy of its own, so reading past the body is an error ASan sees. */
	uint8_t *body = malloc(size - off + 1);
	memcpy(body, data + off, size - off);
	response_judge(http, body, size - off, data[2] & 1, retry_after, redact, NULL, &v);
	free(body);
	if (v.status != OTLP_EXPORTED && v.status != OTLP_PARTIAL && v.status != OTLP_FAILED)
		abort();
	if (v.retry && http != 408 && http != 429 && (http < 502 || http > 504))
		abort();
	if (v.retry_after > RESPONSE_MAX_RETRY_AFTER || (v.status == OTLP_PARTIAL && v.rejected <= 0))
		abort();
	size_t n = strnlen(v.error, sizeof(v.error));
	if (n == sizeof(v.error) || strstr(v.error, secret))
		abort();
	for (size_t i = 0; i < n; i++)
		if (v.error[i] < ' ' || v.error[i] > '~')
			abort();
	return 0;
}
