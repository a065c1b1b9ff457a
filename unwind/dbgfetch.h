/*
 * dbgfetch: debug files from a debuginfod server (the manual's "Symbols and debug
 * information"), only when --debuginfod URL was given, through libdebuginfod.
 *
 * For a module with a build id whose local searches failed, GET URL/buildid/<id>/debuginfo
 * within one budget of DBGFETCH_BUDGET_SECONDS shared by every fetch of one symbolizer
 * (counted from dbgfetch_new); libdebuginfod streams each answer into a temporary file of
 * the cache directory and renames it into place only once complete; a transfer that passes
 * DBGFETCH_MAX_BYTES (or announces more) is aborted before that, so an oversized file is
 * never published.  Every failure is non-fatal: the module keeps what it had (addresses,
 * or the symbols of its own ELF), and a note says why.
 *
 * The cache directory is private to the process (created by dbgfetch_new under TMPDIR, or
 * /tmp, and removed by dbgfetch_free): a stage confined by Landlock is given write access
 * to it and nothing else.
 */
#ifndef RP_DBGFETCH_H
#define RP_DBGFETCH_H

#include <stddef.h>
#include <stdint.h>

#define DBGFETCH_BUDGET_SECONDS 30
#define DBGFETCH_MAX_BYTES (512ull << 20)

/* Each query (a module asked for) ends in exactly one of fetched, not_found, oversized,
 * out_of_time and failed: the stream's debuginfod frame relies on it. */
struct dbgfetch_stats {
	uint64_t queried;	/* modules asked for */
	uint64_t requests;	/* fetches started */
	uint64_t fetched;	/* files published */
	uint64_t not_found;	/* the server has none (404) */
	uint64_t oversized;	/* aborted over DBGFETCH_MAX_BYTES */
	uint64_t out_of_time;	/* aborted, or not started, once the budget was spent */
	uint64_t failed;	/* any other failure (connection, server error) */
	uint64_t bytes_fetched;	/* the sizes of the files published */
};

struct dbgfetch;

/* note, when set, is told each failure in one line (unwind makes it a stream warning).
 * NULL with a reason in err when the URL is not acceptable or the cache cannot be made.
 * RUSTPROFILE_DEBUGINFOD_MAX_BYTES, when set to a smaller number, lowers the size cap (the
 * tests use it: a 512 MiB debug file is not something a test serves). */
struct dbgfetch *dbgfetch_new(const char *url, void (*note)(void *ctx, const char *msg),
			      void *ctx, char *err, size_t errlen);
/* The private cache directory. */
const char *dbgfetch_cache_dir(const struct dbgfetch *);

struct rp_confine_path;
struct rp_confine_spec;
/* What a confined stage that fetches needs (lib/confine.h), added to spec, whose paths
 * array is p with room for RP_CONFINE_NET_PATHS + 1 more: writing the cache, reading what
 * name resolution and TLS read, and a TCP connect to the URL's port. */
void dbgfetch_confine(struct dbgfetch *, struct rp_confine_path *p,
		      struct rp_confine_spec *spec);
/* Fetches the debug file of this build id: its path (malloc'ed), or NULL. */
char *dbgfetch_debuginfo(struct dbgfetch *, const uint8_t *build_id, size_t len);
const struct dbgfetch_stats *dbgfetch_stats(const struct dbgfetch *);
/* Starts a new budget: serve's symbolizer lives as long as the server, and each request of
 * the symbol API is one lookup as a recording's unwind is (a module that failed is not
 * asked again either way: the symbolizer remembers failures). */
void dbgfetch_new_budget(struct dbgfetch *);
void dbgfetch_free(struct dbgfetch *);	/* accepts NULL; removes the cache */

#endif
