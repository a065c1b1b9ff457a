#include "dict.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"

#define GROW(d, arr, n, cap) \
	(grow_array((void **)&(d)->arr, &(d)->cap, (d)->n, 1, sizeof(*(d)->arr)) < 0 ? oom(d) : 0)

static int
oom(struct dict *d)
{
	snprintf(d->err, sizeof(d->err), "out of memory");
	return -1;
}

static uint64_t
hash_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

#define HASH_SEED 0xcbf29ce484222325ull

/* Finds the slot of hash whose entry eq accepts, or the empty slot it would take. */
static struct dict_slot *
hash_find(struct dict_hash *h, uint64_t hash, int (*eq)(struct dict *, uint32_t, const void *),
	  struct dict *d, const void *key)
{
	size_t i = hash & h->mask;

	while (h->slots[i].ix1) {
		if (h->slots[i].hash == hash && eq(d, h->slots[i].ix1 - 1, key))
			return &h->slots[i];
		i = (i + 1) & h->mask;
	}
	return &h->slots[i];
}

/* Keeps the load at most one half: doubles the table (rehashing) when it would pass. */
static int
hash_room(struct dict_hash *h)
{
	size_t n = h->slots ? (h->mask + 1) * 2 : 1024;
	struct dict_slot *s;

	if (h->slots && (h->count + 1) * 2 <= h->mask + 1)
		return 0;
	if (!(s = calloc(n, sizeof(*s))))
		return -1;
	for (size_t i = 0; h->slots && i <= h->mask; i++) {
		size_t j = h->slots[i].hash & (n - 1);

		if (!h->slots[i].ix1)
			continue;
		while (s[j].ix1)
			j = (j + 1) & (n - 1);
		s[j] = h->slots[i];
	}
	free(h->slots);
	h->slots = s;
	h->mask = n - 1;
	return 0;
}

static void
hash_clear(struct dict_hash *h)
{
	if (h->slots)
		memset(h->slots, 0, (h->mask + 1) * sizeof(*h->slots));
	h->count = 0;
}

static int
pool_add(struct dict *d, const char *s, size_t n, size_t *off)
{
	if (grow_array((void **)&d->pool, &d->cap_pool, d->npool, n + 1, 1) < 0)
		return oom(d);
	memcpy(d->pool + d->npool, s, n);
	d->pool[d->npool + n] = '\0';
	*off = d->npool;
	d->npool += n + 1;
	return 0;
}

struct strkey {
	const char *s;
	size_t n;
};

static int
string_eq(struct dict *d, uint32_t ix, const void *key)
{
	const struct strkey *k = key;
	const char *s = d->pool + d->strs[ix];

	return strlen(s) == k->n && memcmp(s, k->s, k->n) == 0;
}

int32_t
dict_str(struct dict *d, const char *s, size_t n)
{
	struct strkey k = { s, n };
	uint64_t h = hash_bytes(HASH_SEED, s, n);
	struct dict_slot *slot;

	if (memchr(s, '\0', n))         /* never in the stream's strings; cut, to be safe */
		k.n = n = strlen(s);
	if (hash_room(&d->str_h) < 0)
		return oom(d);
	slot = hash_find(&d->str_h, h, string_eq, d, &k);
	if (slot->ix1)
		return (int32_t)(slot->ix1 - 1);
	if (GROW(d, strs, nstrs, cap_strs) < 0 || pool_add(d, s, n, &d->strs[d->nstrs]) < 0)
		return -1;
	*slot = (struct dict_slot){ h, (uint32_t)++d->nstrs };
	d->str_h.count++;
	return (int32_t)(d->nstrs - 1);
}

int32_t
dict_cstr(struct dict *d, const char *s)
{
	return dict_str(d, s, strlen(s));
}

/* The entry k, whose string value (s, k->slen bytes; NULL for a number) joins the pool. */
static int32_t
attr_add(struct dict *d, struct dict_attr *k, const char *s)
{
	uint64_t h = hash_bytes(HASH_SEED, &k->key, sizeof(k->key));
	struct dict_slot *slot;

	h = hash_bytes(h, &k->i, sizeof(k->i));
	if (s)
		h = hash_bytes(h, s, k->slen);
	if (hash_room(&d->attr_h) < 0)
		return oom(d);
	size_t i = h & d->attr_h.mask;
	for (slot = &d->attr_h.slots[i]; slot->ix1; slot = &d->attr_h.slots[i]) {
		const struct dict_attr *a = &d->attrs[slot->ix1 - 1];
		if (slot->hash == h && a->key == k->key && a->kind == k->kind && a->i == k->i &&
		    (!s || (a->slen == k->slen && !memcmp(d->pool + a->s, s, k->slen))))
			return (int32_t)(slot->ix1 - 1);
		i = (i + 1) & d->attr_h.mask;
	}
	if (GROW(d, attrs, nattrs, cap_attrs) < 0)
		return -1;
	if (s && pool_add(d, s, k->slen, &k->s) < 0)
		return -1;
	d->attrs[d->nattrs] = *k;
	*slot = (struct dict_slot){ h, (uint32_t)++d->nattrs };
	d->attr_h.count++;
	return (int32_t)(d->nattrs - 1);
}

int32_t
dict_attr_int(struct dict *d, int32_t key, int64_t v)
{
	struct dict_attr k = { .key = key, .kind = OT_ANY_INT, .i = v };

	return key < 0 ? -1 : attr_add(d, &k, NULL);
}

int32_t
dict_attr_str(struct dict *d, int32_t key, const char *s, size_t n)
{
	struct dict_attr k = { .key = key, .kind = OT_ANY_STRING, .slen = (uint32_t)n };

	return key < 0 ? -1 : attr_add(d, &k, s);
}

static int32_t
mapping_ix(struct dict *d, uint32_t id)
{
	const struct def_mapping *m;
	struct dict_mapping *dm;
	uint32_t w;

	if (!id)
		return 0;
	if (idmap_get(&d->map_ix, id, &w))
		return (int32_t)w;
	if (!(m = defs_mapping(d->defs, id))) {
		snprintf(d->err, sizeof(d->err), "a location references undefined mapping %u", id);
		return -1;
	}
	if (GROW(d, maps, nmaps, cap_maps) < 0)
		return -1;
	dm = &d->maps[d->nmaps];
	*dm = (struct dict_mapping){ m->start, m->limit, m->offset, 0, 0 };
	dm->filename = dict_str(d, defs_str(d->defs, m->path), m->path.len);
	if (m->build_id.len && !d->k_build_id)
		d->k_build_id = dict_cstr(d, "process.executable.build_id.gnu");
	if (m->build_id.len)
		dm->attr = dict_attr_str(d, d->k_build_id, defs_str(d->defs, m->build_id),
					 m->build_id.len);
	if (dm->filename < 0 || dm->attr < 0 || idmap_put(&d->map_ix, id, (uint32_t)d->nmaps) < 0)
		return dm->filename < 0 || dm->attr < 0 ? -1 : oom(d);
	return (int32_t)d->nmaps++;
}

static int32_t
function_ix(struct dict *d, uint32_t id)
{
	const struct def_function *f;
	struct dict_function *df;
	uint32_t w;

	if (idmap_get(&d->fn_ix, id, &w))
		return (int32_t)w;
	if (!(f = defs_function(d->defs, id))) {
		snprintf(d->err, sizeof(d->err), "a location references undefined function %u", id);
		return -1;
	}
	if (GROW(d, fns, nfns, cap_fns) < 0)
		return -1;
	df = &d->fns[d->nfns];
	df->name = dict_str(d, defs_str(d->defs, f->name), f->name.len);
	df->system_name = f->system_name.len
		? dict_str(d, defs_str(d->defs, f->system_name), f->system_name.len) : df->name;
	df->filename = f->filename.len
		? dict_str(d, defs_str(d->defs, f->filename), f->filename.len) : 0;
	df->start_line = f->start_line;
	if (df->name < 0 || df->system_name < 0 || df->filename < 0)
		return -1;
	if (idmap_put(&d->fn_ix, id, (uint32_t)d->nfns) < 0)
		return oom(d);
	return (int32_t)d->nfns++;
}

/* The attribute "profile.frame.type" of a kernel or a native location, made once used. */
static int32_t
frame_type(struct dict *d, int kernel)
{
	int32_t *a = kernel ? &d->a_kernel : &d->a_native;

	if (!d->k_frame_type && (d->k_frame_type = dict_cstr(d, "profile.frame.type")) < 0)
		return -1;
	if (!*a)
		*a = dict_attr_str(d, d->k_frame_type, kernel ? "kernel" : "native", 6);
	return *a;
}

static int32_t
location_ix(struct dict *d, uint32_t id)
{
	const struct def_location *l;
	uint32_t w;
	int32_t map;

	if (idmap_get(&d->loc_ix, id, &w))
		return (int32_t)w;
	if (!(l = defs_location(d->defs, id))) {
		snprintf(d->err, sizeof(d->err), "a stack references undefined location %u", id);
		return -1;
	}
	if ((map = mapping_ix(d, l->mapping_id)) < 0 || GROW(d, locs, nlocs, cap_locs) < 0 ||
	    grow_array((void **)&d->lines, &d->cap_lines, d->nlines, l->nlines,
		       sizeof(*d->lines)) < 0)
		return map < 0 ? -1 : oom(d);
	const struct def_mapping *m = l->mapping_id ? defs_mapping(d->defs, l->mapping_id) : NULL;
	struct dict_location *dl = &d->locs[d->nlocs];
	*dl = (struct dict_location){ .mapping = map, .address = l->address,
				      .lines = d->nlines, .nlines = l->nlines };
	if ((dl->attr = frame_type(d, m && (m->flags & MAPPING_KERNEL))) < 0)
		return -1;
	/* Innermost inlined function first, as the stream and OTLP both order them. */
	for (uint16_t j = 0; j < l->nlines; j++) {
		const struct fr_line *ln = &d->defs->lines[l->lines + j];
		int32_t f = function_ix(d, ln->function_id);

		if (f < 0)
			return -1;
		d->lines[d->nlines++] = (struct dict_line){ f, ln->line };
	}
	if (idmap_put(&d->loc_ix, id, (uint32_t)d->nlocs) < 0)
		return oom(d);
	return (int32_t)d->nlocs++;
}

struct wordkey {
	const int32_t *w;
	uint32_t n;
};

static int
stack_eq(struct dict *d, uint32_t ix, const void *key)
{
	const struct wordkey *k = key;
	const struct dict_stack *s = &d->stacks[ix];

	return s->n == k->n && !memcmp(d->words + s->off, k->w, k->n * sizeof(*k->w));
}

int32_t
dict_stack(struct dict *d, const uint32_t *locs, uint16_t n)
{
	struct wordkey k = { d->scratch, n > STREAM_MAX_LOCS ? STREAM_MAX_LOCS : n };
	struct dict_slot *slot;
	uint64_t h;

	for (uint32_t i = 0; i < k.n; i++)
		if ((d->scratch[i] = location_ix(d, locs[i])) < 0)
			return -1;
	if (!k.n)
		return 0;       /* Stack{} at index 0 is the empty stack */
	h = hash_bytes(HASH_SEED, d->scratch, k.n * sizeof(*d->scratch));
	if (hash_room(&d->stack_h) < 0)
		return oom(d);
	slot = hash_find(&d->stack_h, h, stack_eq, d, &k);
	if (slot->ix1)
		return (int32_t)(slot->ix1 - 1);
	if (GROW(d, stacks, nstacks, cap_stacks) < 0 ||
	    grow_array((void **)&d->words, &d->cap_words, d->nwords, k.n, sizeof(*d->words)) < 0)
		return oom(d);
	d->stacks[d->nstacks] = (struct dict_stack){ d->nwords, k.n };
	memcpy(d->words + d->nwords, d->scratch, k.n * sizeof(*d->scratch));
	d->nwords += k.n;
	*slot = (struct dict_slot){ h, (uint32_t)++d->nstacks };
	d->stack_h.count++;
	return (int32_t)(d->nstacks - 1);
}

void
dict_init(struct dict *d, const struct defs *defs)
{
	memset(d, 0, sizeof(*d));
	d->defs = defs;
	idmap_init(&d->map_ix);
	idmap_init(&d->loc_ix);
	idmap_init(&d->fn_ix);
}

static void out_free(struct dict_out *o);

static void
free_out(struct dict *d)
{
	out_free(d->out);
	d->out = NULL;
}

void
dict_release(struct dict *d)
{
	free_out(d);
	free(d->pool);
	free(d->strs);
	free(d->str_h.slots);
	free(d->maps);
	free(d->locs);
	free(d->lines);
	free(d->fns);
	free(d->words);
	free(d->stacks);
	free(d->stack_h.slots);
	free(d->attrs);
	free(d->attr_h.slots);
	idmap_release(&d->map_ix);
	idmap_release(&d->loc_ix);
	idmap_release(&d->fn_ix);
	dict_init(d, d->defs);
}

int
dict_reset(struct dict *d)
{
	free_out(d);
	d->npool = d->nstrs = d->nmaps = d->nlocs = d->nlines = d->nfns = 0;
	d->nwords = d->nstacks = d->nattrs = 0;
	hash_clear(&d->str_h);
	hash_clear(&d->stack_h);
	hash_clear(&d->attr_h);
	idmap_clear(&d->map_ix);
	idmap_clear(&d->loc_ix);
	idmap_clear(&d->fn_ix);
	d->err[0] = '\0';
	/* The zero value of every table, at index 0. */
	if (dict_str(d, "", 0) < 0 || GROW(d, maps, nmaps, cap_maps) < 0 ||
	    GROW(d, locs, nlocs, cap_locs) < 0 || GROW(d, fns, nfns, cap_fns) < 0 ||
	    GROW(d, stacks, nstacks, cap_stacks) < 0 || GROW(d, attrs, nattrs, cap_attrs) < 0)
		return -1;
	d->maps[d->nmaps++] = (struct dict_mapping){ 0 };
	d->locs[d->nlocs++] = (struct dict_location){ 0 };
	d->fns[d->nfns++] = (struct dict_function){ 0 };
	d->stacks[d->nstacks++] = (struct dict_stack){ 0 };
	d->attrs[d->nattrs++] = (struct dict_attr){ 0 };
	d->k_build_id = d->k_frame_type = d->a_kernel = d->a_native = 0;
	return 0;
}

/* The messages of the tables: each table an array of messages and one of pointers. */
struct dict_out {
	OtMapping *maps, **pmaps;
	OtLocation *locs, **plocs;
	OtLine *lines, **plines;
	OtFunction *fns, **pfns;
	OtStack *stacks, **pstacks;
	OtKeyValueAndUnit *attrs, **pattrs;
	OtAnyValue *values;
	OtLink link, *plink;
	uint8_t zeros[16];
	char **strs;
	int32_t *attr_ix;       /* each mapping's and location's one attribute */
};

static void
out_free(struct dict_out *o)
{
	if (!o)
		return;
	free(o->maps), free(o->pmaps), free(o->locs), free(o->plocs);
	free(o->lines), free(o->plines), free(o->fns), free(o->pfns);
	free(o->stacks), free(o->pstacks), free(o->attrs), free(o->pattrs);
	free(o->values), free(o->strs), free(o->attr_ix);
	free(o);
}

#define ALLOC(o, f, n) (((o)->f = calloc((n) ? (n) : 1, sizeof(*(o)->f))) != NULL)

static int
out_alloc(struct dict *d, struct dict_out *o)
{
	return ALLOC(o, maps, d->nmaps) && ALLOC(o, pmaps, d->nmaps) &&
	       ALLOC(o, locs, d->nlocs) && ALLOC(o, plocs, d->nlocs) &&
	       ALLOC(o, lines, d->nlines) && ALLOC(o, plines, d->nlines) &&
	       ALLOC(o, fns, d->nfns) && ALLOC(o, pfns, d->nfns) &&
	       ALLOC(o, stacks, d->nstacks) && ALLOC(o, pstacks, d->nstacks) &&
	       ALLOC(o, attrs, d->nattrs) && ALLOC(o, pattrs, d->nattrs) &&
	       ALLOC(o, values, d->nattrs) && ALLOC(o, strs, d->nstrs) &&
	       ALLOC(o, attr_ix, d->nmaps + d->nlocs);
}

static void
lay_out_code_tables(struct dict *d, struct dict_out *o)
{
	for (size_t i = 0; i < d->nmaps; i++) {
		const struct dict_mapping *m = &d->maps[i];
		OtMapping *x = &o->maps[i];

		*x = (OtMapping)OT_MAPPING_INIT;
		x->memory_start = m->start, x->memory_limit = m->limit, x->file_offset = m->offset;
		x->filename_strindex = m->filename;
		o->attr_ix[i] = m->attr;
		x->n_attribute_indices = m->attr ? 1 : 0;
		x->attribute_indices = &o->attr_ix[i];
		o->pmaps[i] = x;
	}
	for (size_t i = 0; i < d->nlines; i++) {
		o->lines[i] = (OtLine)OT_LINE_INIT;
		o->lines[i].function_index = d->lines[i].function;
		o->lines[i].line = d->lines[i].line;
		o->plines[i] = &o->lines[i];
	}
	for (size_t i = 0; i < d->nlocs; i++) {
		const struct dict_location *l = &d->locs[i];
		OtLocation *x = &o->locs[i];

		*x = (OtLocation)OT_LOCATION_INIT;
		x->mapping_index = l->mapping, x->address = l->address;
		x->n_lines = l->nlines, x->lines = o->plines + l->lines;
		o->attr_ix[d->nmaps + i] = l->attr;
		x->n_attribute_indices = l->attr ? 1 : 0;
		x->attribute_indices = &o->attr_ix[d->nmaps + i];
		o->plocs[i] = x;
	}
	for (size_t i = 0; i < d->nfns; i++) {
		OtFunction *x = &o->fns[i];

		*x = (OtFunction)OT_FUNCTION_INIT;
		x->name_strindex = d->fns[i].name, x->system_name_strindex = d->fns[i].system_name;
		x->filename_strindex = d->fns[i].filename, x->start_line = d->fns[i].start_line;
		o->pfns[i] = x;
	}
}

static void
lay_out_rest(struct dict *d, struct dict_out *o)
{
	for (size_t i = 0; i < d->nstacks; i++) {
		o->stacks[i] = (OtStack)OT_STACK_INIT;
		o->stacks[i].n_location_indices = d->stacks[i].n;
		o->stacks[i].location_indices = d->words + d->stacks[i].off;
		o->pstacks[i] = &o->stacks[i];
	}
	for (size_t i = 0; i < d->nattrs; i++) {
		const struct dict_attr *a = &d->attrs[i];
		OtKeyValueAndUnit *x = &o->attrs[i];

		*x = (OtKeyValueAndUnit)OT_KVU_INIT;
		o->pattrs[i] = x;
		if (i == 0)
			continue;       /* KeyValueAndUnit{}: no value either */
		o->values[i] = (OtAnyValue)OT_ANY_VALUE_INIT;
		o->values[i].value_case = a->kind;
		if (a->kind == OT_ANY_STRING)
			o->values[i].string_value = d->pool + a->s;
		else if (a->kind == OT_ANY_BOOL)
			o->values[i].bool_value = a->i != 0;
		else
			o->values[i].int_value = a->i;
		x->key_strindex = a->key;
		x->value = &o->values[i];
	}
	for (size_t i = 0; i < d->nstrs; i++)
		o->strs[i] = d->pool + d->strs[i];
	/* link_table[0]: the zero link, with ids of the lengths some codecs insist on. */
	o->link = (OtLink)OT_LINK_INIT;
	o->link.trace_id = (ProtobufCBinaryData){ 16, o->zeros };
	o->link.span_id = (ProtobufCBinaryData){ 8, o->zeros };
	o->plink = &o->link;
}

int
dict_finish(struct dict *d, OtDictionary *out)
{
	struct dict_out *o;

	free_out(d);
	if (!(o = calloc(1, sizeof(*o))) || (d->out = o, !out_alloc(d, o)))
		return oom(d);
	lay_out_code_tables(d, o);
	lay_out_rest(d, o);
	*out = (OtDictionary)OT_DICTIONARY_INIT;
	out->n_mapping_table = d->nmaps, out->mapping_table = o->pmaps;
	out->n_location_table = d->nlocs, out->location_table = o->plocs;
	out->n_function_table = d->nfns, out->function_table = o->pfns;
	out->n_link_table = 1, out->link_table = &o->plink;
	out->n_string_table = d->nstrs, out->string_table = o->strs;
	out->n_attribute_table = d->nattrs, out->attribute_table = o->pattrs;
	out->n_stack_table = d->nstacks, out->stack_table = o->pstacks;
	return 0;
}
