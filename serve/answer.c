/* answer: building the HTTP answers of the API (see symapi.h). */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symapi.h"

int
answer_error(struct answer *a, unsigned status, const char *fmt, ...)
{
	char msg[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_t *o = json_pack("{s:s, s:s}", "error", msg, "title", msg);
	free(a->body);
	a->body = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	a->len = a->body ? strlen(a->body) : 0;
	a->status = status;
	a->type = "application/json";
	return -1;
}

void
answer_json(struct answer *a, void *value)
{
	char *s = value ? json_dumps(value, JSON_COMPACT) : NULL;

	json_decref(value);
	if (!s) {
		answer_error(a, 500, "out of memory");
		return;
	}
	if (strlen(s) > SERVE_MAX_RESPONSE) {
		free(s);
		answer_error(a, 500, "the response would pass %u bytes", SERVE_MAX_RESPONSE);
		return;
	}
	free(a->body);
	a->body = s;
	a->len = strlen(s);
	a->status = 200;
	a->type = "application/json";
}
