/*
 * The ProfilesDictionary of one OTLP request: the string, mapping, location, function,
 * stack, attribute and link tables every Profile of the request shares.  Each table starts
 * with its zero value (index 0 = unset, as the format requires), entries are kept once
 * (strings, stacks and attributes by value, the rest by stream id) and only what the
 * window's samples reach is added, so nothing unreferenced is sent.
 *
 * Entries are kept compact while the window is added; dict_finish lays them out as the
 * protobuf-c messages of the request (valid until the next dict_reset).
 */
#ifndef EO_DICT_H
#define EO_DICT_H

#include <stddef.h>
#include <stdint.h>

#include "defs.h"
#include "idmap.h"
#include "pbtypes.h"

struct dict_slot {
	uint64_t hash;
	uint32_t ix1;           /* entry index + 1; 0 is an empty slot */
};

struct dict_hash {
	struct dict_slot *slots;
	size_t mask, count;     /* mask + 1 slots, a power of two, or none */
};

struct dict_attr {
	int32_t key;            /* string index */
	int kind;               /* OT_ANY_STRING, OT_ANY_INT, OT_ANY_BOOL */
	int64_t i;
	size_t s;               /* OT_ANY_STRING: offset of the value in pool */
	uint32_t slen;
};

struct dict_mapping {
	uint64_t start, limit, offset;
	int32_t filename, attr;
};

struct dict_location {
	int32_t mapping, attr;
	uint64_t address;
	size_t lines;           /* first in dict.lines */
	uint16_t nlines;
};

struct dict_line {
	int32_t function;
	int64_t line;
};

struct dict_function {
	int32_t name, system_name, filename;
	int64_t start_line;
};

struct dict_stack {
	size_t off;             /* first in dict.words */
	uint32_t n;
};

struct dict_out;

struct dict {
	const struct defs *defs;
	char *pool;             /* every string, NUL-terminated */
	size_t npool, cap_pool;
	size_t *strs;           /* string_table: offsets in pool */
	size_t nstrs, cap_strs;
	struct dict_hash str_h;
	struct dict_mapping *maps;
	size_t nmaps, cap_maps;
	struct idmap map_ix;
	struct dict_location *locs;
	size_t nlocs, cap_locs;
	struct idmap loc_ix;
	struct dict_line *lines;
	size_t nlines, cap_lines;
	struct dict_function *fns;
	size_t nfns, cap_fns;
	struct idmap fn_ix;
	int32_t *words;         /* the stacks' location indices, leaf first */
	size_t nwords, cap_words;
	struct dict_stack *stacks;
	size_t nstacks, cap_stacks;
	struct dict_hash stack_h;
	struct dict_attr *attrs;
	size_t nattrs, cap_attrs;
	struct dict_hash attr_h;
	int32_t k_build_id, k_frame_type, a_kernel, a_native; /* 0 until first used */
	int32_t scratch[STREAM_MAX_LOCS];
	struct dict_out *out;   /* dict_finish's messages */
	char err[200];
};

void dict_init(struct dict *d, const struct defs *defs);
void dict_release(struct dict *d);
/* Empties every table (a new request), keeping the memory.  0, or -1 out of memory. */
int dict_reset(struct dict *d);

/* Each returns the entry's index, or -1 with d->err. */
int32_t dict_str(struct dict *d, const char *s, size_t n);
int32_t dict_cstr(struct dict *d, const char *s);
int32_t dict_attr_int(struct dict *d, int32_t key, int64_t v);
int32_t dict_attr_str(struct dict *d, int32_t key, const char *s, size_t n);
/* The stack of stream location ids locs (leaf first), with their locations, mappings,
 * functions and lines. */
int32_t dict_stack(struct dict *d, const uint32_t *locs, uint16_t n);

/* Lays the tables out into *out; 0, or -1 with d->err. */
int dict_finish(struct dict *d, OtDictionary *out);

#endif
