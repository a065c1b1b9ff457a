/* symmod: opening and indexing one module (private to the symbolizer). */
#ifndef RP_SYMMOD_H
#define RP_SYMMOD_H

#include <stddef.h>
#include <stdint.h>

#include "debugfile.h"
#include "symdwarf.h"
#include "symelf.h"
#include "symstr.h"

struct symmod {
	char *path;			/* the file read for segments */
	uint8_t build_id[SYM_BUILD_ID_MAX];
	size_t build_id_len;
	struct symseg *segs;
	int nsegs;
	struct strpool pool;		/* every string the indexes point at */
	struct symtab_index syms;
	struct dwindex dw;
	struct elffile dwfile;		/* the file dw reads while units remain to index */
};

struct symmod_req {
	const char *path;		/* may be NULL */
	const uint8_t *build_id;	/* may be NULL */
	size_t build_id_len;
	const char *cache_dir;		/* may be NULL */
	const char *const *dirs;	/* symbol dirs */
	size_t ndirs;
	struct dbgfetch *fetch;		/* --debuginfod, else NULL */
	struct dbgcache *dbgcache;	/* --debug-cache, else NULL */
};

/* Opens and indexes a module; NULL with a reason in err when nothing usable is found. */
struct symmod *symmod_open(const struct symmod_req *, char *err, size_t errlen);
void symmod_free(struct symmod *);

#endif
