/*
 * serve: the stage's shared state and limits (docs/serve.md).  One HTTP thread answers
 * every request (libmicrohttpd's internal polling thread), so the state needs no locks:
 * the symbolizer is not thread-safe and need not be.
 */
#ifndef RP_SERVE_H
#define RP_SERVE_H

#include <stddef.h>
#include <stdint.h>

#include "modindex.h"

/* The manual's limits. */
#define SERVE_MAX_COMPRESSED (512ull << 20)
#define SERVE_MAX_DECOMPRESSED (128ull << 20)
#define SERVE_MAX_DIAGNOSTICS (1u << 20)
#define SERVE_MAX_SAMPLES 65536
#define SERVE_MAX_STACKS 65536
#define SERVE_MAX_FUNCTIONS 262144
#define SERVE_MAX_THREADS 4096
#define SERVE_MAX_BODY (8u << 20)
#define SERVE_MAX_RESPONSE (32u << 20)
#define SERVE_MAX_SCAN 16384
#define SERVE_MAX_LIST 4096
#define SERVE_MAX_SOURCE_DIRS 64

struct symbolizer;
struct dbgfetch;

struct serve {
	const char *profile;		/* --profile, or NULL */
	const char *directory;		/* --directory, or NULL */
	const char *cors_origin;	/* NULL: no CORS */
	const char *token;		/* NULL: no bearer token required */
	const char *base_url;		/* http://HOST:PORT, what the served profile points at */
	const char *source_dirs[SERVE_MAX_SOURCE_DIRS];
	size_t nsource_dirs;
	const char *const *symbol_dirs;
	size_t nsymbol_dirs;
	char *module_cache;		/* the .modules beside the profiles */
	struct symbolizer *sym;
	struct dbgfetch *fetch;		/* --debuginfod, else NULL */
	struct modindex mods;
	/* --profile: the file as served, decompressed, read once at start */
	uint8_t *data;
	size_t len;
	int jslb;
	/* figures for GET /healthz */
	uint64_t requests, refused;
};

#endif
