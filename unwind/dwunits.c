/* dwunits: unit headers, unit DIE abbreviations and .debug_aranges read directly
 * (see dwunits.h).  Layouts: DWARF 5 sections 7.5.1 (unit headers), 7.5.3 (abbreviations)
 * and 6.1.2 (.debug_aranges); DWARF 2 to 4 differ in the unit header only. */
#include "dwunits.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "leb.h"
#include "symdwarf.h"

/* A bounded little-endian reader (leb.h): a read past the end sets bad and gives 0. */
struct rd {
	const uint8_t *p, *end;
	int bad;
};

static uint64_t rd_n(struct rd *r, unsigned n)
{
	return leb_fixed(&r->p, r->end, n, &r->bad);
}

static uint64_t rd_uleb(struct rd *r)
{
	return leb_u(&r->p, r->end, &r->bad);
}

/* An initial length (leb.h): the unit's length and offset size (4 or 8). */
static uint64_t rd_length(struct rd *r, unsigned *os)
{
	return leb_initial_length(&r->p, r->end, os, &r->bad);
}

/* The bytes of section name, unless it is missing, still compressed or empty. */
static const uint8_t *section(Elf *elf, size_t shstrndx, const char *name, size_t *len)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *s;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || !(s = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    strcmp(s, name) != 0)
			continue;
		if (sh.sh_type == SHT_NOBITS || (sh.sh_flags & SHF_COMPRESSED) ||
		    !(d = elf_getdata(scn, NULL)) || !d->d_buf || !d->d_size)
			return NULL;
		*len = d->d_size;
		return d->d_buf;
	}
	return NULL;
}

/* The attribute specifications of abbreviation code in the table at off, after its tag
 * (*tag); NULL when not found. */
static const uint8_t *abbrev_find(const struct dwunits *u, uint64_t off, uint64_t code,
				  uint64_t *tag)
{
	if (off >= u->nabbrev)
		return NULL;
	struct rd r = { u->abbrev + off, u->abbrev + u->nabbrev, 0 };
	while (!r.bad) {
		uint64_t c = rd_uleb(&r);
		if (c == 0 || r.bad)
			return NULL;
		*tag = rd_uleb(&r);
		rd_n(&r, 1);	/* DW_CHILDREN_* */
		if (c == code)
			return r.bad ? NULL : r.p;
		for (;;) {	/* skip the attribute specifications */
			uint64_t name = rd_uleb(&r), form = rd_uleb(&r);
			if (r.bad || (name == 0 && form == 0))
				break;
			if (form == DW_FORM_implicit_const)
				rd_uleb(&r);	/* its value, an sleb: the same bytes */
		}
	}
	return NULL;
}

/* Whether the attribute specifications at p name attribute at: 1, 0, -1 when malformed. */
static int abbrev_has(const struct dwunits *u, const uint8_t *p, uint64_t at)
{
	struct rd r = { p, u->abbrev + u->nabbrev, 0 };

	for (;;) {
		uint64_t name = rd_uleb(&r), form = rd_uleb(&r);
		if (r.bad)
			return -1;
		if (name == 0 && form == 0)
			return 0;
		if (name == at)
			return 1;
		if (form == DW_FORM_implicit_const)
			rd_uleb(&r);
	}
}

/* The abbreviation of unit x's DIE: its attribute specifications and tag; NULL when its
 * code cannot be read or found. */
static const uint8_t *unit_abbrev(const struct dwunits *u, const struct dwunit *x,
				  uint64_t end, uint64_t *tag)
{
	struct rd r = { u->info + x->die, u->info + end, 0 };
	uint64_t code = rd_uleb(&r);

	return r.bad || code == 0 ? NULL : abbrev_find(u, x->abbrev, code, tag);
}

/* Whether a DWARF 2-4 unit is one dwarf_get_units calls compile or partial: a partial
 * unit, or a compile unit without DW_AT_GNU_dwo_id (that makes it a skeleton or a split
 * unit there).  1, 0, or -1 when it cannot tell. */
static int v4_listed(const struct dwunits *u, const struct dwunit *x, uint64_t end)
{
	uint64_t tag;
	const uint8_t *a = unit_abbrev(u, x, end, &tag);

	if (!a)
		return -1;
	if (tag == DW_TAG_partial_unit)
		return 1;
	if (tag != DW_TAG_compile_unit)
		return 0;
	int dwo = abbrev_has(u, a, DW_AT_GNU_dwo_id);
	return dwo < 0 ? -1 : !dwo;
}

/* Reads the unit header at off: 1 and *x, *end when it is listed, 0 when it is another
 * kind, -1 when this reader declines. */
static int read_header(const struct dwunits *u, uint64_t off, struct dwunit *x, uint64_t *end)
{
	struct rd r = { u->info + off, u->info + u->ninfo, 0 };
	unsigned os;
	uint64_t len = rd_length(&r, &os);
	size_t hdr = (size_t)(r.p - (u->info + off));

	if (r.bad || len > u->ninfo - off - hdr)
		return -1;
	*end = off + hdr + len;
	r.end = u->info + *end;
	unsigned version = (unsigned)rd_n(&r, 2), type = DW_UT_compile;
	if (version == 5) {
		type = (unsigned)rd_n(&r, 1);
		rd_n(&r, 1);	/* address size */
		x->abbrev = rd_n(&r, os);
		if (type == DW_UT_skeleton || type == DW_UT_split_compile)
			rd_n(&r, 8);	/* dwo_id */
		else if (type == DW_UT_type || type == DW_UT_split_type)
			rd_n(&r, 8 + os);	/* signature, type offset */
		else if (type != DW_UT_compile && type != DW_UT_partial)
			return -1;
	} else if (version >= 2 && version <= 4) {
		x->abbrev = rd_n(&r, os);
		rd_n(&r, 1);	/* address size */
	} else {
		return -1;
	}
	if (r.bad)
		return -1;
	x->off = off;
	x->die = (uint64_t)(r.p - u->info);
	if (version < 5)
		return v4_listed(u, x, *end);
	return type == DW_UT_compile || type == DW_UT_partial;
}

int dwunits_list(Elf *elf, struct dwunits *u)
{
	const char *id = elf_getident(elf, NULL);
	size_t shstrndx;
	uint64_t off = 0, end;

	memset(u, 0, sizeof(*u));
	if (!id || id[EI_DATA] != ELFDATA2LSB || elf_getshdrstrndx(elf, &shstrndx) != 0 ||
	    !(u->info = section(elf, shstrndx, ".debug_info", &u->ninfo)) ||
	    !(u->abbrev = section(elf, shstrndx, ".debug_abbrev", &u->nabbrev)))
		goto decline;
	while (off < u->ninfo) {
		struct dwunit x;
		int rc = read_header(u, off, &x, &end);
		if (rc < 0)
			goto decline;
		if (rc > 0) {
			if (dwindex_grow((void **)&u->v, &u->cap, u->n + 1, sizeof(*u->v)) < 0) {
				dwunits_free(u);
				return -1;
			}
			u->v[u->n++] = x;
		}
		off = end;
	}
	return 0;
decline:
	dwunits_free(u);
	return 1;
}

/* The listed unit whose header is at off, or -1. */
static int64_t unit_at(const struct dwunits *u, uint64_t off)
{
	size_t lo = 0, hi = u->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (u->v[mid].off == off)
			return (int64_t)mid;
		if (u->v[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

int dwunits_aranges(Elf *elf, const struct dwunits *u,
		    int (*add)(void *arg, uint64_t lo, uint64_t hi, uint32_t unit), void *arg)
{
	size_t shstrndx, len;
	const uint8_t *sec;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0 ||
	    !(sec = section(elf, shstrndx, ".debug_aranges", &len)))
		return 1;
	for (size_t off = 0; off < len;) {
		struct rd r = { sec + off, sec + len, 0 };
		unsigned os;
		uint64_t setlen = rd_length(&r, &os);
		size_t hdr = (size_t)(r.p - (sec + off));
		if (r.bad || setlen > len - off - hdr)
			return 1;
		r.end = sec + off + hdr + setlen;
		unsigned version = (unsigned)rd_n(&r, 2);
		uint64_t cu = rd_n(&r, os);
		unsigned asz = (unsigned)rd_n(&r, 1), seg = (unsigned)rd_n(&r, 1);
		if (r.bad || version != 2 || (asz != 4 && asz != 8) || seg != 0)
			return 1;
		/* Tuples start at a multiple of their size from the set's start. */
		size_t at = (size_t)(r.p - (sec + off)), tuple = 2 * asz;
		r.p += (tuple - at % tuple) % tuple;
		if (r.p > r.end)
			return 1;
		int64_t unit = unit_at(u, cu);
		for (;;) {
			uint64_t lo = rd_n(&r, asz), n = rd_n(&r, asz);
			if (r.bad)
				return 1;
			if (lo == 0 && n == 0)
				break;
			if (unit >= 0 && add(arg, lo, lo + n, (uint32_t)unit) < 0)
				return -1;
		}
		off += hdr + setlen;
	}
	return 0;
}

int dwunits_has_code(const struct dwunits *u, size_t i)
{
	uint64_t tag, end = i + 1 < u->n ? u->v[i + 1].off : u->ninfo;
	const uint8_t *a = unit_abbrev(u, &u->v[i], end, &tag);
	int lo, ranges;

	if (!a || (lo = abbrev_has(u, a, DW_AT_low_pc)) < 0 ||
	    (ranges = abbrev_has(u, a, DW_AT_ranges)) < 0)
		return -1;
	return lo || ranges;
}

void dwunits_free(struct dwunits *u)
{
	free(u->v);
	memset(u, 0, sizeof(*u));
}
