/*
 * The symbol files JIT runtimes write for perf (docs/jit.md): the perf map
 * (/tmp/perf-PID.map, text, one "START SIZE name" line per function, hex) and the jitdump
 * (jit-PID.dump, binary: a file header, then records of which JIT_CODE_LOAD names code and
 * JIT_CODE_MOVE moves it; debug, unwinding and close records are skipped).  Both are the
 * target's to shape, so every length is checked against what is left, and the table is
 * capped: symbols beyond JIT_MAX_SYMBOLS are dropped and names beyond JIT_MAX_NAME bytes are
 * cut, each counted.
 *
 * The files grow while the runtime compiles: each parser takes the bytes from where the last
 * call stopped and consumes whole lines or records only, returning how many bytes it used,
 * so that the rest is parsed again once the file has more.
 */
#ifndef RP_JITPARSE_H
#define RP_JITPARSE_H

#include <stddef.h>
#include <stdint.h>

#include "idmap.h"

#define JIT_MAX_SYMBOLS 1000000u   /* per process */
#define JIT_MAX_NAME 1024u         /* bytes of a name kept */
#define JIT_MAX_RECORD (64u << 20) /* a jitdump record longer than this ends the file */
#define JIT_NO_INDEX UINT64_MAX

struct jitsym {
	uint64_t start, end;
	uint64_t seq;                 /* order of definition: a later one wins */
	uint64_t code_index;          /* jitdump's, JIT_NO_INDEX for a perf map line */
	char *name;
};

struct jittab {
	struct jitsym *v;
	size_t n, cap;
	int sorted;
	uint64_t seq;
	uint64_t dropped;             /* symbols over JIT_MAX_SYMBOLS */
	uint64_t truncated;           /* names cut to JIT_MAX_NAME */
	uint64_t malformed;           /* lines or records that name nothing */
	struct idmap index;           /* jitdump code_index -> position in v */
};

/* The state of one jitdump: its header is read once; 0 until then. */
struct jitdump_state {
	int have_header, swap, bad; /* bad: the file cannot be read on (bad header, record) */
};

void jittab_init(struct jittab *t);
void jittab_release(struct jittab *t);
/* Parses the complete lines of buf[0, len); returns the bytes consumed.  -1 when out of
 * memory. */
long jit_perfmap_parse(struct jittab *t, const char *buf, size_t len);
/* Parses the complete records of buf[0, len), the bytes of the file from where the last
 * call stopped (the header first); returns the bytes consumed, -1 when out of memory.  A
 * bad header or record sets s->bad: nothing after it can be trusted to start a record. */
long jit_dump_parse(struct jittab *t, struct jitdump_state *s, const uint8_t *buf,
		    size_t len);
/* The symbol holding addr, the latest defined when several do; NULL when none. */
const struct jitsym *jittab_find(struct jittab *t, uint64_t addr);

#endif
