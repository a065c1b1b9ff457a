/*
 * reqparse: the JSON bodies of POST /symbolicate/v5, /source/v1 and /asm/v1 checked and
 * turned into C structures (../shared/reference/symbol-api.md), parsed by jansson.  A body
 * is untrusted: every field is checked for its type and range here, so the handlers only
 * see valid requests.  Each parse returns 0, or -1 with a one-line reason in err (the
 * request is then answered 400).
 */
#ifndef RP_SERVE_REQPARSE_H
#define RP_SERVE_REQPARSE_H

#include <stddef.h>
#include <stdint.h>

#define SYMREQ_MAX_JOBS 64		/* the Firefox Profiler sends at most 10 */
#define SYMREQ_MAX_FRAMES 1000000	/* every frame of a request, all jobs together */
#define SYMREQ_NAME_MAX 256		/* a debugName or an id */

struct symreq_module {
	char debug_name[SYMREQ_NAME_MAX];
	char breakpad_id[SYMREQ_NAME_MAX];	/* hex digits only */
};

struct symreq_frame {
	uint32_t module;		/* index into the job's modules */
	uint32_t address;		/* library-relative */
};

struct symreq_stack {
	struct symreq_frame *frames;
	size_t n;
};

struct symreq_job {
	struct symreq_module *modules;
	size_t nmodules;
	struct symreq_stack *stacks;
	size_t nstacks;
};

struct symreq {
	struct symreq_job *jobs;
	size_t njobs;
};

int symreq_parse(const char *body, size_t len, struct symreq *out, char *err, size_t errlen);
void symreq_free(struct symreq *);

struct sourcereq {
	char debug_name[SYMREQ_NAME_MAX];
	char debug_id[SYMREQ_NAME_MAX];
	uint32_t module_offset;
	char *file;			/* malloc'ed */
};

int sourcereq_parse(const char *body, size_t len, struct sourcereq *out, char *err,
		    size_t errlen);
void sourcereq_free(struct sourcereq *);

struct asmreq {
	char debug_name[SYMREQ_NAME_MAX];	/* "" when not given */
	char debug_id[SYMREQ_NAME_MAX];
	char name[SYMREQ_NAME_MAX];
	char code_id[SYMREQ_NAME_MAX];
	uint32_t start;
	uint32_t size;
	int until_function_end;
};

int asmreq_parse(const char *body, size_t len, struct asmreq *out, char *err, size_t errlen);

/* "0x1a2b" (the prefix mandatory, at most 32 bits) to *v: 0, or -1. */
int reqparse_hex32(const char *s, uint32_t *v);

#endif
