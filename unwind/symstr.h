/* symstr: an interning string pool for the symbolizer.
 *
 * Every name and file path a module index keeps is stored once here, so the index arrays hold
 * plain pointers and repeated names (one file path for thousands of line rows, one function
 * name for every inlined copy) cost nothing extra.  Pointers returned stay valid until
 * strpool_free: text lives in chunks that never move.
 */
#ifndef RP_SYMSTR_H
#define RP_SYMSTR_H

#include <stddef.h>
#include <stdint.h>

struct strchunk;

struct strpool {
	struct strchunk *chunks;	/* newest first */
	const char **slots;		/* open-addressing table of interned strings */
	uint32_t *hashes;		/* hash of each slot, 0 = empty */
	size_t nslots, nused;
};

void strpool_init(struct strpool *);
/* Returns the pooled copy of s[0..len) (NUL-terminated), or NULL when out of memory. */
const char *strpool_intern(struct strpool *, const char *s, size_t len);
const char *strpool_cstr(struct strpool *, const char *s);	/* NULL s gives NULL */
void strpool_free(struct strpool *);

#endif
