/*
 * symapi: POST /symbolicate/v5, /source/v1 and /asm/v1 (../shared/reference/symbol-api.md),
 * answered from local files through unwind's symbolizer (and its debuginfod client when
 * --debuginfod was given).
 */
#ifndef RP_SERVE_SYMAPI_H
#define RP_SERVE_SYMAPI_H

#include <stddef.h>

#include "serve.h"

struct answer {
	unsigned status;
	char *body;		/* malloc'ed */
	size_t len;
	const char *type;	/* Content-Type */
};

/* Each fills *a (a JSON body, an error one {"error","title"} with a 4xx/5xx status too). */
void symapi_symbolicate(struct serve *, const char *body, size_t len, struct answer *a);
void symapi_source(struct serve *, const char *body, size_t len, struct answer *a);
void symapi_asm(struct serve *, const char *body, size_t len, struct answer *a);

/* An error answer: {"error": msg, "title": msg} with this status; returns -1. */
int answer_error(struct answer *a, unsigned status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A JSON answer from a jansson value (stolen); 500 when it passes SERVE_MAX_RESPONSE. */
void answer_json(struct answer *a, void *value);

/* The module of a request, by breakpad id (or full build id), opened by the symbolizer;
 * NULL with a reason in err. */
struct symmod *symapi_module(struct serve *, const char *debug_name, const char *breakpad,
			     const char *code_id, char *err, size_t errlen);

#endif
