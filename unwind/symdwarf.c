/* symdwarf: one walk over all DIEs builds the address index (see symdwarf.h). */
#include "symdwarf.h"
#include "dbgcache.h"
#include "dbgindex.h"
#include "dwunits.h"
#include "secinflate.h"

#include <dwarf.h>
#include <gelf.h>
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
	uint32_t cu;			/* the unit being walked */
};

struct dwlazy {
	struct walk w;			/* kept: descriptors are shared across units */
	uint64_t *dies;			/* compile and partial units' DIEs, in .debug_info order */
	uint8_t *done;			/* DBGIX_* as set up; then non-zero once indexed */
	size_t nunits;
	/* units' ranges, from .debug_aranges or DW_AT_ranges / low_pc / high_pc, sorted by lo
	 * (the debug cache's index keeps them as they are: dbgindex.h) */
	struct dbgix_range *ranges;
	uint64_t *maxhi;		/* maxhi[i]: the highest hi of ranges[0..i] */
	size_t nranges;
	void **inflated;		/* section contents inflated here, for libdw */
	size_t ninflated;
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
		idx->funcs[idx->nfuncs++] = (struct dwrange){ lo, hi, (uint32_t)desc, w->cu };
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

static int emit_seg(struct dwindex *idx, uint64_t lo, uint64_t hi, uint32_t node, uint32_t cu)
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
	idx->segs[idx->nsegs++] = (struct dwrange){ lo, hi, node, cu };
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
			if (cur < t->hi && emit_seg(w->idx, cur, t->hi, t->node, w->cu) < 0)
				return -1;
			cur = cur > t->hi ? cur : t->hi;
		}
		if (i == n)
			break;
		if (sp) {
			struct inl_range *t = &r[w->stack[sp - 1]];
			if (r[i].hi > t->hi)
				r[i].hi = t->hi;
			if (cur < lo && emit_seg(w->idx, cur, lo, t->node, w->cu) < 0)
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

/* By start, then end, then unit: equal ranges keep .debug_info order. */
static int range_cmp(const struct dwrange *x, const struct dwrange *y)
{
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	return x->cu < y->cu ? -1 : x->cu > y->cu;
}

struct keyed_range {
	struct dwrange r;
	size_t ord;
};

static int keyed_range_cmp(const void *a, const void *b)
{
	const struct keyed_range *x = a, *y = b;
	int c = range_cmp(&x->r, &y->r);

	if (c)
		return c;
	return x->ord < y->ord ? -1 : x->ord > y->ord;
}

/* Sorts v[from..n), in walk order where ranges are equal, and merges it into the sorted
 * v[0..from).  0, or -1 when out of memory. */
static int merge_ranges(struct dwrange **v, size_t cap, size_t from, size_t n)
{
	struct keyed_range *k;
	struct dwrange *old = *v, *out;
	size_t m = n - from;

	if (m == 0)
		return 0;
	if (!(k = malloc(m * sizeof(*k))))
		return -1;
	for (size_t i = 0; i < m; i++)
		k[i] = (struct keyed_range){ old[from + i], i };
	qsort(k, m, sizeof(*k), keyed_range_cmp);
	if (from == 0) {
		for (size_t i = 0; i < m; i++)
			old[i] = k[i].r;
		free(k);
		return 0;
	}
	if (!(out = malloc(cap * sizeof(*out)))) {
		free(k);
		return -1;
	}
	size_t i = 0, j = 0, o = 0;
	while (i < from || j < m)
		out[o++] = j == m || (i < from && range_cmp(&old[i], &k[j].r) <= 0) ? old[i++]
									    : k[j++].r;
	free(k);
	free(old);
	*v = out;
	return 0;
}

static int index_cu(struct walk *w, Dwarf_Die *cudie, uint32_t cu)
{
	w->cu = cu;
	if (dwarf_getsrcfiles(cudie, &w->files, &w->nfiles) != 0) {
		w->files = NULL;
		w->nfiles = 0;
	}
	if (walk(w, cudie, -1, 1, 0, 0) < 0)
		return -1;
	return dwindex_add_lines(w->idx, cudie, cu, w->pool);
}

/* Sorts what the units just walked added after the first f funcs, s segs and l lines into
 * the arrays, and rebuilds the bucket indexes. */
static int merge_new(struct dwindex *idx, size_t f, size_t s, size_t l)
{
	if (dwindex_sort_lines(idx, l) < 0 ||
	    merge_ranges(&idx->funcs, idx->cfuncs, f, idx->nfuncs) < 0 ||
	    merge_ranges(&idx->segs, idx->csegs, s, idx->nsegs) < 0)
		return -1;
	addrix_free(&idx->xfuncs);
	addrix_free(&idx->xsegs);
	addrix_free(&idx->xlines);
	if (addrix_build(&idx->xfuncs, idx->funcs, idx->nfuncs, sizeof(*idx->funcs)) < 0 ||
	    addrix_build(&idx->xsegs, idx->segs, idx->nsegs, sizeof(*idx->segs)) < 0 ||
	    addrix_build(&idx->xlines, idx->lines, idx->nlines, sizeof(*idx->lines)) < 0)
		return -1;
	return 0;
}

static void lazy_free(struct dwindex *idx)
{
	struct dwlazy *z = idx->lazy;

	if (z) {
		free(z->w.tmp);
		free(z->w.stack);
		free(z->w.desc_keys);
		free(z->w.desc_vals);
		free(z->dies);
		free(z->done);
		free(z->ranges);
		free(z->maxhi);
	}
	idx->lazy = NULL;
	if (idx->dwarf)
		dwarf_end(idx->dwarf);
	idx->dwarf = NULL;
	if (z) {
		/* Only libdw read them; the Elf keeps dangling pointers it never follows. */
		for (size_t i = 0; i < z->ninflated; i++)
			free(z->inflated[i]);
		free(z->inflated);
		free(z);
	}
}

static int add_range(struct dwlazy *z, size_t *cap, uint64_t lo, uint64_t hi, uint32_t unit)
{
	if (!usable_range(lo, hi))
		return 0;
	if (dwindex_grow((void **)&z->ranges, cap, z->nranges + 1, sizeof(*z->ranges)) < 0)
		return -1;
	z->ranges[z->nranges++] = (struct dbgix_range){ lo, hi, unit };
	return 1;
}

static int curange_cmp(const void *a, const void *b)
{
	const struct dbgix_range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->unit < y->unit ? -1 : x->unit > y->unit;
}

/* The unit whose DIE is at off (units are in offset order), or -1. */
static int64_t unit_at(const struct dwlazy *z, Dwarf_Off off)
{
	size_t lo = 0, hi = z->nunits;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (z->dies[mid] == off)
			return (int64_t)mid;
		if (z->dies[mid] < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static int add_unit(struct dwlazy *z, size_t *cap, uint64_t die)
{
	if (dwindex_grow((void **)&z->dies, cap, z->nunits + 1, sizeof(*z->dies)) < 0)
		return -1;
	z->dies[z->nunits++] = die;
	return 0;
}

/* The units and the ranges .debug_aranges gives them, from libdw: what dwunits.h declined.
 * known[u] is set for a unit with a usable range.  0, or -1 when out of memory. */
static int libdw_units(struct dwindex *idx, struct dwlazy *z, size_t *cranges, uint8_t **known)
{
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie, subdie;
	Dwarf_Half version;
	uint8_t unit_type;
	Dwarf_Aranges *ar;
	size_t nar = 0, cunits = 0;

	while (dwarf_get_units(idx->dwarf, cu, &cu, &version, &unit_type, &cudie, &subdie) == 0) {
		if ((unit_type == DW_UT_compile || unit_type == DW_UT_partial) &&
		    add_unit(z, &cunits, dwarf_dieoffset(&cudie)) < 0)
			return -1;
	}
	if (!(*known = calloc(z->nunits ? z->nunits : 1, 1)))
		return -1;
	if (dwarf_getaranges(idx->dwarf, &ar, &nar) != 0)
		nar = 0;
	for (size_t i = 0; i < nar; i++) {
		Dwarf_Addr start;
		Dwarf_Word len;
		Dwarf_Off off;
		int64_t u;
		if (dwarf_getarangeinfo(dwarf_onearange(ar, i), &start, &len, &off) != 0 ||
		    (u = unit_at(z, off)) < 0)
			continue;
		int rc = add_range(z, cranges, start, start + len, (uint32_t)u);
		if (rc < 0)
			return -1;
		(*known)[u] |= rc > 0;
	}
	return 0;
}

struct arange_add {
	struct dwlazy *z;
	size_t *cranges;
	uint8_t *known;
};

static int arange_add(void *arg, uint64_t lo, uint64_t hi, uint32_t unit)
{
	struct arange_add *a = arg;
	int rc = add_range(a->z, a->cranges, lo, hi, unit);

	if (rc > 0)
		a->known[unit] = 1;
	return rc < 0 ? -1 : 0;
}

/* The same from the sections' bytes (dwunits.h): 0, 1 when declined, -1 out of memory. */
static int read_units(Elf *elf, struct dwlazy *z, struct dwunits *du, size_t *cranges,
		      uint8_t **known)
{
	size_t cunits = 0;
	int rc = dwunits_list(elf, du);

	if (rc != 0)
		return rc;
	for (size_t i = 0; i < du->n; i++)
		if (add_unit(z, &cunits, du->v[i].die) < 0)
			return -1;
	if (!(*known = calloc(z->nunits ? z->nunits : 1, 1)))
		return -1;
	struct arange_add a = { z, cranges, *known };
	rc = dwunits_aranges(elf, du, arange_add, &a);
	if (rc < 0)
		return -1;
	if (rc > 0) {	/* as when dwarf_getaranges fails: no range is known */
		z->nranges = 0;
		memset(*known, 0, z->nunits);
	}
	return 0;
}

/* The ranges sorted: each range's highest reach so far, then what the units walked at once
 * added (after the first f funcs, s segs and l lines) sorted in. */
static int finish_setup(struct dwindex *idx, struct dwlazy *z, size_t f, size_t s, size_t l)
{
	if (z->nranges) {
		if (!(z->maxhi = malloc(z->nranges * sizeof(*z->maxhi))))
			return -1;
		for (size_t i = 0; i < z->nranges; i++)
			z->maxhi[i] = i && z->maxhi[i - 1] > z->ranges[i].hi ? z->maxhi[i - 1]
									    : z->ranges[i].hi;
	}
	return merge_new(idx, f, s, l);
}

/* What lazy_setup found, from the index a run before kept (dbgindex.h): the units walked at
 * once then are walked again, in the same order, and nothing else is read.  0, or -1 when
 * out of memory. */
static int cached_setup(struct dwindex *idx, struct dwlazy *z, const struct dbgindex *ix)
{
	size_t n = ix->nunits ? ix->nunits : 1, r = ix->nranges ? ix->nranges : 1;

	if (!(z->dies = malloc(n * sizeof(*z->dies))) || !(z->done = malloc(n)) ||
	    !(z->ranges = malloc(r * sizeof(*z->ranges))))
		return -1;
	z->nunits = ix->nunits;
	memcpy(z->dies, ix->dies, ix->nunits * sizeof(*z->dies));
	memcpy(z->done, ix->state, ix->nunits);
	z->nranges = ix->nranges;
	memcpy(z->ranges, ix->ranges, ix->nranges * sizeof(*z->ranges));
	size_t f = idx->nfuncs, s = idx->nsegs, l = idx->nlines;
	for (size_t u = 0; u < z->nunits; u++) {
		Dwarf_Die die;
		if (z->done[u] == DBGIX_EAGER && dwarf_offdie(idx->dwarf, z->dies[u], &die) &&
		    index_cu(&z->w, &die, (uint32_t)u) < 0)
			return -1;
	}
	return finish_setup(idx, z, f, s, l);
}

uint64_t dwindex_info_size(Elf *elf)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	const char *name;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return 0;
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && (name = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    strcmp(name, ".debug_info") == 0)
			return sh.sh_type == SHT_NOBITS ? 0 : sh.sh_size;
	return 0;
}

/* What lazy_setup found, into ix (which owns copies): 0, or -1 when out of memory. */
static int index_units(struct dbgindex *ix, const struct dwlazy *z, uint64_t ninfo)
{
	size_t n = z->nunits ? z->nunits : 1, r = z->nranges ? z->nranges : 1;

	if (!(ix->dies = malloc(n * sizeof(*ix->dies))) || !(ix->state = malloc(n)) ||
	    !(ix->ranges = malloc(r * sizeof(*ix->ranges))))
		return -1;
	ix->ninfo = ninfo;
	ix->nunits = z->nunits;
	if (z->nunits) {	/* a file of no units has neither array */
		memcpy(ix->dies, z->dies, z->nunits * sizeof(*z->dies));
		memcpy(ix->state, z->done, z->nunits);
	}
	ix->nranges = z->nranges;
	if (z->nranges)
		memcpy(ix->ranges, z->ranges, z->nranges * sizeof(*z->ranges));
	return 0;
}

/* Lists the units and their ranges; a unit without known ranges is walked right away. */
static int lazy_setup(struct dwindex *idx, struct dwlazy *z, Elf *elf)
{
	struct dwunits du;
	size_t cranges = 0;
	uint8_t *known = NULL;
	int rc = read_units(elf, z, &du, &cranges, &known);

	if (rc > 0)
		rc = libdw_units(idx, z, &cranges, &known);
	if (rc < 0 || !(z->done = calloc(z->nunits ? z->nunits : 1, 1)))
		goto fail;
	size_t f = idx->nfuncs, s = idx->nsegs, l = idx->nlines;
	for (size_t u = 0; u < z->nunits; u++) {
		Dwarf_Addr base, lo, hi;
		Dwarf_Die die;
		ptrdiff_t off = 0;
		if (known[u])
			continue;
		/* Whether the unit owns machine code: it says where (DW_AT_low_pc or DW_AT_ranges,
		 * DWARF 5 section 3.1.1); one with neither holds only types and data (libc6-dbg:
		 * 126 of 2,063 units, 5 million instructions of walking).  Its abbreviation tells
		 * without libdw reading it (and every unit before it); -1: libdw tells, below. */
		int code = du.n ? dwunits_has_code(&du, u) : -1;
		if (code == 0 || !dwarf_offdie(idx->dwarf, z->dies[u], &die)) {
			z->done[u] = DBGIX_NONE;
			continue;
		}
		if (code < 0)
			code = dwarf_hasattr(&die, DW_AT_low_pc) || dwarf_hasattr(&die, DW_AT_ranges);
		rc = 0;
		while (!known[u] && rc >= 0 && (off = dwarf_ranges(&die, off, &base, &lo, &hi)) > 0)
			if ((rc = add_range(z, &cranges, lo, hi, (uint32_t)u)) > 0)
				known[u] = 1;
		if (rc < 0 || (!known[u] && code && index_cu(&z->w, &die, (uint32_t)u) < 0))
			goto fail;
		z->done[u] = known[u] ? DBGIX_LAZY : code ? DBGIX_EAGER : DBGIX_NONE;
	}
	free(known);
	dwunits_free(&du);
	if (z->nranges)
		qsort(z->ranges, z->nranges, sizeof(*z->ranges), curange_cmp);
	return finish_setup(idx, z, f, s, l);
fail:
	free(known);
	dwunits_free(&du);
	return -1;
}

/* libdw inflates every compressed debug section it knows when the file is opened.  Location
 * lists and macros are never read here, and in a distribution's debug file they are a good
 * part of the bytes (a fifth of libc6-dbg's inflate time): they are marked empty in this
 * process's copy of the section headers, which libdw then skips.  The file is not changed. */
static void hide_unused(Elf *elf)
{
	static const char *const unused[] = { "loc", "loclists", "macro", "macinfo" };
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		int z = strncmp(name, ".zdebug_", 8) == 0;
		if (!z && (strncmp(name, ".debug_", 7) != 0 || !(sh.sh_flags & SHF_COMPRESSED)))
			continue;
		for (size_t i = 0; i < sizeof(unused) / sizeof(unused[0]); i++) {
			if (strcmp(name + 7 + z, unused[i]) == 0) {
				sh.sh_type = SHT_NOBITS;
				gelf_update_shdr(scn, &sh);
				break;
			}
		}
	}
}

/* libdw inflates compressed sections with zlib; libdeflate does it in half the time, which
 * for a big debug file is most of the cost of opening it.  Each zlib-compressed debug
 * section is inflated here (secinflate.h) and handed over as this process's uncompressed
 * copy of it (data and header), so libdw finds nothing left to do.  Any failure leaves the
 * section to libdw. */
static void inflate_sections(struct dwlazy *z, Elf *elf)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		const char *name;
		void *out, **v;
		size_t len, align;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_COMPRESSED) ||
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    strncmp(name, ".debug_", 7) != 0)
			continue;
		if (!(v = realloc(z->inflated, (z->ninflated + 1) * sizeof(*v))))
			break;
		z->inflated = v;
		if (!(out = secinflate(elf, scn, &len, &align)))
			continue;
		sh.sh_flags &= ~(GElf_Xword)SHF_COMPRESSED;
		sh.sh_size = len;
		sh.sh_addralign = align;
		if (!(d = elf_getdata(scn, NULL)) || !gelf_update_shdr(scn, &sh)) {
			free(out);
			continue;
		}
		z->inflated[z->ninflated++] = out;
		d->d_buf = out;
		d->d_size = len;
		d->d_type = ELF_T_BYTE;
		d->d_align = align;
	}
}

int dwindex_build(struct dwindex *idx, Elf *elf, struct strpool *pool,
		  const struct dwindex_keep *keep)
{
	struct dwlazy *z;

	memset(idx, 0, sizeof(*idx));
	if (!(z = calloc(1, sizeof(*z))))
		return -1;
	idx->lazy = z;
	hide_unused(elf);
	/* Without libdeflate nothing is inflated here: libdw does it, and there is nothing to
	 * store. */
	inflate_sections(z, elf);
	uint64_t copy_size = keep && !keep->store_copy ? keep->copy_size : 0;
	if (keep && keep->store_copy && z->ninflated)
		copy_size = dbgcache_store(keep->cache, keep->build_id, keep->build_id_len, elf);
	if (keep && keep->out)
		keep->out->copy_size = copy_size;
	if (!(idx->dwarf = dwarf_begin_elf(elf, DWARF_C_READ, NULL))) {
		lazy_free(idx);
		return 0;	/* no DWARF at all */
	}
	z->w = (struct walk){ .idx = idx, .pool = pool };
	/* A copy's units as an earlier run listed them (dbgindex.h); else listed, and kept. */
	int rc;
	if (keep && keep->in) {
		rc = cached_setup(idx, z, keep->in);
	} else {
		rc = lazy_setup(idx, z, elf);
		if (rc == 0 && keep && keep->out && copy_size)
			rc = index_units(keep->out, z, dwindex_info_size(elf));
	}
	if (rc < 0) {
		dwindex_free(idx);
		return -1;
	}
	idx->has_dwarf = idx->nfuncs > 0 || idx->nlines > 0 || z->nranges > 0;
	if (!z->nranges)
		lazy_free(idx);	/* everything is indexed already */
	return 0;
}

int dwindex_prepare(struct dwindex *idx, uint64_t addr)
{
	struct dwlazy *z = idx->lazy;
	size_t lo = 0, hi;
	int any = 0;

	if (!z)
		return 0;
	for (hi = z->nranges; lo < hi;) {	/* the first range starting above addr */
		size_t mid = lo + (hi - lo) / 2;
		if (z->ranges[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Ranges before it that reach past addr; maxhi says when none further back can. */
	for (size_t i = lo; i-- > 0 && z->maxhi[i] > addr;)
		any |= z->ranges[i].hi > addr && !z->done[z->ranges[i].unit];
	if (!any)
		return 0;
	/* Walked in unit order, as a full walk would. */
	size_t f = idx->nfuncs, s = idx->nsegs, l = idx->nlines;
	for (size_t u = 0; u < z->nunits; u++) {
		int hit = 0;
		if (z->done[u])
			continue;
		for (size_t i = lo; !hit && i-- > 0 && z->maxhi[i] > addr;)
			hit = z->ranges[i].unit == u && z->ranges[i].hi > addr;
		if (!hit)
			continue;
		z->done[u] = 1;
		Dwarf_Die die;
		if (dwarf_offdie(idx->dwarf, z->dies[u], &die) &&
		    index_cu(&z->w, &die, (uint32_t)u) < 0)
			goto fail;
	}
	if (merge_new(idx, f, s, l) == 0)
		return 0;
fail:
	/* Out of memory: answer nothing rather than search arrays left half sorted. */
	idx->nfuncs = idx->nsegs = idx->nlines = 0;
	addrix_free(&idx->xfuncs);
	addrix_free(&idx->xsegs);
	addrix_free(&idx->xlines);
	lazy_free(idx);
	return -1;
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

int64_t dwindex_func_range(const struct dwindex *idx, uint64_t addr, uint64_t *lo,
			   uint64_t *hi)
{
	int64_t i = addrix_floor(&idx->xfuncs, idx->funcs, idx->nfuncs, sizeof(*idx->funcs), addr);

	for (int64_t stop = i - OVERLAP_SCAN; i >= 0 && i > stop; i--) {
		if (addr < idx->funcs[i].hi) {
			*lo = idx->funcs[i].lo;
			*hi = idx->funcs[i].hi;
			return idx->funcs[i].id;
		}
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
	lazy_free(idx);
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
