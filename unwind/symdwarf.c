/* symdwarf: one walk over all DIEs builds the address index (see symdwarf.h). */
#include "symdwarf.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DIE_DEPTH 64	/* deeper nesting than any compiler emits: corrupt input */

/* An inline range of the function being walked, before flattening. */
struct inl_range {
	uint64_t lo, hi;
	uint32_t node, depth;
};

struct walk {
	struct dwindex *idx;
	struct strpool *pool;
	Dwarf_Files *files;		/* this CU's file table, for DW_AT_call_file */
	size_t nfiles;
	struct inl_range *tmp;		/* inline ranges of the functions being walked */
	size_t ntmp, ctmp;
	uint32_t *stack;		/* flattening stack */
	size_t cstack;
	uint64_t *desc_keys;		/* open addressing: origin DIE offset + 1 -> desc */
	uint32_t *desc_vals;
	size_t nkeys;
};

int dwindex_grow(void **v, size_t *cap, size_t n, size_t esz)
{
	if (n <= *cap)
		return 0;
	size_t c = *cap ? *cap : 64;
	while (c < n)
		c *= 2;
	void *p = realloc(*v, c * esz);
	if (!p)
		return -1;
	*v = p;
	*cap = c;
	return 0;
}

static int desc_map_grow(struct walk *w)
{
	size_t n = w->nkeys ? w->nkeys * 2 : 4096;
	uint64_t *k = calloc(n, sizeof(*k));
	uint32_t *v = calloc(n, sizeof(*v));

	if (!k || !v) {
		free(k);
		free(v);
		return -1;
	}
	for (size_t i = 0; i < w->nkeys; i++) {
		if (!w->desc_keys[i])
			continue;
		size_t j = (w->desc_keys[i] * 0x9e3779b97f4a7c15ull) >> 20 & (n - 1);
		while (k[j])
			j = (j + 1) & (n - 1);
		k[j] = w->desc_keys[i];
		v[j] = w->desc_vals[i];
	}
	free(w->desc_keys);
	free(w->desc_vals);
	w->desc_keys = k;
	w->desc_vals = v;
	w->nkeys = n;
	return 0;
}

static const char *attr_str(Dwarf_Die *die, int name)
{
	Dwarf_Attribute a;

	return dwarf_attr_integrate(die, name, &a) ? dwarf_formstring(&a) : NULL;
}

/* The name descriptor of a subprogram or inlined subroutine, shared by every concrete and
 * inlined copy of one abstract function (keyed by the abstract origin's DIE offset). */
static int64_t die_desc(struct walk *w, Dwarf_Die *die)
{
	Dwarf_Attribute a;
	Dwarf_Die origin, *o = die;

	if (dwarf_attr(die, DW_AT_abstract_origin, &a) && dwarf_formref_die(&a, &origin))
		o = &origin;
	uint64_t key = dwarf_dieoffset(o) + 1;
	if ((w->idx->ndescs + 1) * 2 >= w->nkeys && desc_map_grow(w) < 0)
		return -1;
	size_t mask = w->nkeys - 1, j = (key * 0x9e3779b97f4a7c15ull) >> 20 & mask;
	for (; w->desc_keys[j]; j = (j + 1) & mask) {
		if (w->desc_keys[j] == key)
			return w->desc_vals[j];
	}

	struct dwindex *idx = w->idx;
	if (dwindex_grow((void **)&idx->descs, &idx->cdescs, idx->ndescs + 1,
			 sizeof(*idx->descs)) < 0)
		return -1;
	const char *sys = attr_str(die, DW_AT_linkage_name), *plain = attr_str(die, DW_AT_name);
	int line = 0;
	if (!sys)
		sys = attr_str(die, DW_AT_MIPS_linkage_name);
	if (!sys)
		sys = plain;
	struct dwdesc *d = &idx->descs[idx->ndescs];
	d->sys = sys ? strpool_cstr(w->pool, sys) : NULL;
	d->plain = plain ? strpool_cstr(w->pool, plain) : NULL;
	d->name = NULL;
	d->decl_line = dwarf_decl_line(die, &line) == 0 && line > 0 ? (uint32_t)line : 0;
	if ((sys && !d->sys) || (plain && !d->plain))
		return -1;
	w->desc_keys[j] = key;
	w->desc_vals[j] = (uint32_t)idx->ndescs;
	return (int64_t)idx->ndescs++;
}

static int usable_range(uint64_t lo, uint64_t hi)
{
	return lo != 0 && lo < hi && hi < UINT64_MAX - 1;	/* see discarded() in symline.c */
}

static int add_func(struct walk *w, Dwarf_Die *die)
{
	struct dwindex *idx = w->idx;
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	int64_t desc = -2;
	int n = 0;

	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (!usable_range(lo, hi))
			continue;
		if (desc == -2 && (desc = die_desc(w, die)) < 0)
			return -1;
		if (dwindex_grow((void **)&idx->funcs, &idx->cfuncs, idx->nfuncs + 1,
				 sizeof(*idx->funcs)) < 0)
			return -1;
		idx->funcs[idx->nfuncs++] = (struct dwrange){ lo, hi, (uint32_t)desc };
		n++;
	}
	return n;
}

static uint64_t attr_udata(Dwarf_Die *die, int name)
{
	Dwarf_Attribute a;
	Dwarf_Word v = 0;

	if (!dwarf_attr(die, name, &a) || dwarf_formudata(&a, &v) != 0)
		return 0;
	return v;
}

/* Adds a node for an inlined subroutine and its ranges; returns the node index or -1. */
static int64_t add_inline(struct walk *w, Dwarf_Die *die, int32_t parent, uint32_t depth)
{
	struct dwindex *idx = w->idx;
	int64_t desc = die_desc(w, die);
	uint64_t fi = attr_udata(die, DW_AT_call_file), line = attr_udata(die, DW_AT_call_line);
	const char *file = w->files && fi < w->nfiles ? dwarf_filesrc(w->files, fi, NULL, NULL)
						     : NULL;

	if (desc < 0 || idx->ninl >= INT32_MAX ||
	    dwindex_grow((void **)&idx->inl, &idx->cinl, idx->ninl + 1, sizeof(*idx->inl)) < 0)
		return -1;
	struct dwinline *n = &idx->inl[idx->ninl];
	n->desc = (uint32_t)desc;
	n->parent = parent;
	n->call_file = file ? strpool_cstr(w->pool, file) : "??";
	n->call_line = line <= UINT32_MAX ? (uint32_t)line : 0;
	if (!n->call_file)
		return -1;

	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (!usable_range(lo, hi))
			continue;
		if (dwindex_grow((void **)&w->tmp, &w->ctmp, w->ntmp + 1, sizeof(*w->tmp)) < 0)
			return -1;
		w->tmp[w->ntmp++] = (struct inl_range){ lo, hi, (uint32_t)idx->ninl, depth };
	}
	return (int64_t)idx->ninl++;
}

static int emit_seg(struct dwindex *idx, uint64_t lo, uint64_t hi, uint32_t node)
{
	if (lo >= hi)
		return 0;
	if (idx->nsegs && idx->segs[idx->nsegs - 1].hi == lo &&
	    idx->segs[idx->nsegs - 1].id == node) {
		idx->segs[idx->nsegs - 1].hi = hi;
		return 0;
	}
	if (dwindex_grow((void **)&idx->segs, &idx->csegs, idx->nsegs + 1, sizeof(*idx->segs)) < 0)
		return -1;
	idx->segs[idx->nsegs++] = (struct dwrange){ lo, hi, node };
	return 0;
}

static int inl_range_cmp(const void *a, const void *b)
{
	const struct inl_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->depth < y->depth ? -1 : x->depth > y->depth;
}

/* Turns the nested inline ranges tmp[base..] of one function into disjoint segments, each
 * naming the deepest range covering it: a sweep by start address with a stack of the ranges
 * still open.  A child sticking out of its parent (corrupt DWARF) is clipped to it. */
static int flatten(struct walk *w, size_t base)
{
	struct inl_range *r;
	size_t n = w->ntmp - base, sp = 0;
	uint64_t cur = 0;

	if (n == 0)
		return 0;
	r = w->tmp + base;
	if (dwindex_grow((void **)&w->stack, &w->cstack, n, sizeof(*w->stack)) < 0)
		return -1;
	qsort(r, n, sizeof(*r), inl_range_cmp);
	for (size_t i = 0; i <= n; i++) {
		uint64_t lo = i < n ? r[i].lo : UINT64_MAX;
		while (sp && r[w->stack[sp - 1]].hi <= lo) {	/* close what ended */
			struct inl_range *t = &r[w->stack[--sp]];
			if (cur < t->hi && emit_seg(w->idx, cur, t->hi, t->node) < 0)
				return -1;
			cur = cur > t->hi ? cur : t->hi;
		}
		if (i == n)
			break;
		if (sp) {
			struct inl_range *t = &r[w->stack[sp - 1]];
			if (r[i].hi > t->hi)
				r[i].hi = t->hi;
			if (cur < lo && emit_seg(w->idx, cur, lo, t->node) < 0)
				return -1;
		}
		if (lo < cur)
			continue;	/* overlaps an earlier sibling: corrupt, drop it */
		cur = lo;
		w->stack[sp++] = (uint32_t)i;
	}
	return 0;
}

static int walk(struct walk *w, Dwarf_Die *die, int32_t parent, uint32_t depth, int in_func,
		int level)
{
	Dwarf_Die child;

	if (level > MAX_DIE_DEPTH || dwarf_child(die, &child) != 0)
		return 0;
	do {
		int rc = 0;
		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram: {
			size_t base = w->ntmp;
			if ((rc = add_func(w, &child)) > 0 &&
			    (rc = walk(w, &child, -1, 1, 1, level + 1)) == 0)
				rc = flatten(w, base);
			w->ntmp = base;
			break;
		}
		case DW_TAG_inlined_subroutine: {
			if (!in_func)
				break;
			int64_t node = add_inline(w, &child, parent, depth);
			rc = node < 0 ? -1 : walk(w, &child, (int32_t)node, depth + 1, 1, level + 1);
			break;
		}
		case DW_TAG_lexical_block:
		case DW_TAG_try_block:
		case DW_TAG_catch_block:
		case DW_TAG_namespace:
		case DW_TAG_module:
			rc = walk(w, &child, parent, depth, in_func, level + 1);
			break;
		default:
			break;	/* types and variables hold no code */
		}
		if (rc < 0)
			return -1;
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

static int range_cmp(const void *a, const void *b)
{
	const struct dwrange *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

static int index_cu(struct walk *w, Dwarf_Die *cudie)
{
	if (dwarf_getsrcfiles(cudie, &w->files, &w->nfiles) != 0) {
		w->files = NULL;
		w->nfiles = 0;
	}
	if (walk(w, cudie, -1, 1, 0, 0) < 0)
		return -1;
	return dwindex_add_lines(w->idx, cudie, w->pool);
}

int dwindex_build(struct dwindex *idx, Elf *elf, struct strpool *pool)
{
	struct walk w = { .idx = idx, .pool = pool };
	Dwarf *dw;
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie, subdie;
	Dwarf_Half version;
	uint8_t unit_type;
	int rc = 0;

	memset(idx, 0, sizeof(*idx));
	if (!(dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL)))
		return 0;	/* no DWARF at all */
	while (rc == 0 &&
	       dwarf_get_units(dw, cu, &cu, &version, &unit_type, &cudie, &subdie) == 0) {
		if (unit_type == DW_UT_compile || unit_type == DW_UT_partial)
			rc = index_cu(&w, &cudie);
	}
	if (rc == 0)
		rc = dwindex_sort_lines(idx);
	if (idx->nfuncs)
		qsort(idx->funcs, idx->nfuncs, sizeof(*idx->funcs), range_cmp);
	if (idx->nsegs)
		qsort(idx->segs, idx->nsegs, sizeof(*idx->segs), range_cmp);
	if (rc == 0 &&
	    (addrix_build(&idx->xfuncs, idx->funcs, idx->nfuncs, sizeof(*idx->funcs)) < 0 ||
	     addrix_build(&idx->xsegs, idx->segs, idx->nsegs, sizeof(*idx->segs)) < 0 ||
	     addrix_build(&idx->xlines, idx->lines, idx->nlines, sizeof(*idx->lines)) < 0))
		rc = -1;
	free(w.tmp);
	free(w.stack);
	free(w.desc_keys);
	free(w.desc_vals);
	dwarf_end(dw);
	if (rc < 0)
		dwindex_free(idx);
	return rc;
}

#define OVERLAP_SCAN 8	/* functions rarely overlap; look back a little in case they do */

int64_t dwindex_func(const struct dwindex *idx, uint64_t addr)
{
	int64_t i = addrix_floor(&idx->xfuncs, idx->funcs, idx->nfuncs, sizeof(*idx->funcs), addr);

	for (int64_t stop = i - OVERLAP_SCAN; i >= 0 && i > stop; i--) {
		if (addr < idx->funcs[i].hi)
			return idx->funcs[i].id;
	}
	return -1;
}

int64_t dwindex_inline(const struct dwindex *idx, uint64_t addr)
{
	int64_t i = addrix_floor(&idx->xsegs, idx->segs, idx->nsegs, sizeof(*idx->segs), addr);

	if (i < 0 || addr >= idx->segs[i].hi || idx->segs[i].id >= idx->ninl)
		return -1;
	return idx->segs[i].id;
}

void dwindex_free(struct dwindex *idx)
{
	if (!idx)
		return;
	free(idx->descs);
	free(idx->funcs);
	free(idx->segs);
	free(idx->inl);
	free(idx->lines);
	free(idx->files);
	addrix_free(&idx->xfuncs);
	addrix_free(&idx->xsegs);
	addrix_free(&idx->xlines);
	memset(idx, 0, sizeof(*idx));
}
