/*
 * modindex: which module a request means.  The symbol API names a library by debugName and
 * breakpad id, which keeps only 16 bytes of its build id; the symbolizer wants the whole
 * build id (and a path, when there is one).  The index learns full build ids from the libs
 * of every profile served and from the build-id trees of the module cache and the
 * --symbol-dir directories, and answers a breakpad id with one of them.
 */
#ifndef RP_SERVE_MODINDEX_H
#define RP_SERVE_MODINDEX_H

#include <stddef.h>

#define MODINDEX_MAX 65536		/* modules remembered; more are not indexed */

struct modent {
	char breakpad[34];
	char build_id[129];		/* lower-case hex */
	char *path;			/* NULL when only a build-id tree named it */
	char *debug_name;		/* NULL likewise */
};

struct modindex {
	struct modent *e;
	size_t n, cap;
};

/* Adds (or completes) the module of this build id.  0, or -1 when out of memory, the id is
 * not hex of 2 to 64 bytes, or the index is full. */
int modindex_add(struct modindex *, const char *build_id, const char *path,
		 const char *debug_name);
/* Adds the "libs" of a processed profile given as JSON text (a jansson json_t *). */
void modindex_add_libs(struct modindex *, void *profile_json);
/* Adds each DIR/.build-id/xx/rest[.debug] and DIR/HEX/debuginfo (a debuginfod cache). */
void modindex_scan(struct modindex *, const char *dir);
/* The module of this breakpad id (case-insensitive), preferring one of this debugName;
 * NULL when none is known. */
const struct modent *modindex_find(const struct modindex *, const char *breakpad,
				   const char *debug_name);
void modindex_free(struct modindex *);

#endif
