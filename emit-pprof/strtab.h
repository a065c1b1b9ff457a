/*
 * The pprof string table of one profile: deduplicated through a hash map and kept already
 * encoded as Profile.string_table (field 6) entries, so writing it is one buffer copy.
 * Index 0 is always "" as the format requires.
 */
#ifndef EP_STRTAB_H
#define EP_STRTAB_H

#include <stddef.h>
#include <stdint.h>

#include "pb.h"

struct strtab_slot {
	uint64_t hash;
	size_t off;             /* of the string bytes inside enc */
	uint32_t len;
	uint32_t idx1;          /* index + 1; 0 marks an empty slot */
};

struct strtab {
	struct pb enc;          /* encoded string_table entries */
	struct strtab_slot *slots;
	size_t mask, count;
};

/* 0, or -1 when out of memory. */
int strtab_init(struct strtab *t);
void strtab_release(struct strtab *t);
/* Back to the single entry "" (memory kept); 0 or -1. */
int strtab_reset(struct strtab *t);
/* Index of the string p[0..n) (added if new), or -1 when out of memory. */
int64_t strtab_add(struct strtab *t, const char *p, size_t n);
static inline int64_t
strtab_cstr(struct strtab *t, const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return strtab_add(t, s, n);
}

#endif
