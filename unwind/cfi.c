/* cfi: a module's unwind rows, sorted once; the per-module cache (see cfi.h). */
#include "cfi.h"

#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "cfibuild.h"
#include "debugfile.h"
#include "runsort.h"
#include "secinflate.h"
#include "symbolize.h"
#include "symmod.h"

#ifndef EM_AARCH64
#define EM_AARCH64 183
#endif

static int set_machine(struct cfibuild *b, uint16_t machine)
{
	b->machine = machine;
	if (machine == EM_X86_64) {
		b->sp_reg = 7;
		b->fp_reg = 6;
		b->ra_reg = 16;
		return 0;
	}
	if (machine == EM_AARCH64) {
		b->sp_reg = 31;
		b->fp_reg = 29;
		b->ra_reg = 30;
		return 0;
	}
	return -1;
}

static int rawrow_less(const void *a, const void *b)
{
	const struct rawrow *x = a, *y = b;

	return x->addr != y->addr ? x->addr < y->addr : x->seq < y->seq;
}

void cfi_sort_rows(struct rawrow *v, size_t n)
{
	run_sort(v, n, sizeof(*v), rawrow_less);
}

static int same_rules(const struct cfirow *a, const struct rawrow *b)
{
	return a->cfa == b->cfa && a->cfa_off == b->cfa_off && a->ra == b->ra &&
	       a->ra_off == b->ra_off && a->fp == b->fp && a->fp_off == b->fp_off;
}

/* Sorts the raw rows and keeps, per address, the last one written (an FDE's first row
 * after the previous FDE's end marker); rows repeating their predecessor's rules go. */
static struct cfitab *finish(struct cfibuild *b)
{
	struct cfitab *t = calloc(1, sizeof(*t));
	size_t k = 0;

	if (!t)
		return NULL;
	t->machine = b->machine;
	t->sp_reg = b->sp_reg;
	t->fp_reg = b->fp_reg;
	t->ra_reg = b->ra_reg;
	t->source = "none";
	if (b->n)
		cfi_sort_rows(b->rows, b->n);
	if (b->n && b->rows[b->n - 1].addr - b->rows[0].addr > UINT32_MAX)
		b->n = 0;	/* a module spanning 4 GiB of code: not one we can describe */
	if (b->n && !(t->rows = malloc(b->n * sizeof(*t->rows)))) {
		free(t);
		return NULL;
	}
	t->base = b->n ? b->rows[0].addr : 0;
	for (size_t i = 0; i < b->n; i++) {
		const struct rawrow *w = &b->rows[i];
		if (i + 1 < b->n && b->rows[i + 1].addr == w->addr)
			continue;
		if (k && same_rules(&t->rows[k - 1], w))
			continue;
		t->rows[k++] = (struct cfirow){ (uint32_t)(w->addr - t->base), w->cfa, w->ra,
						w->fp, 0, w->cfa_off, w->ra_off, w->fp_off };
	}
	t->nrows = k;
	if (k) {
		struct cfirow *r = realloc(t->rows, k * sizeof(*r));
		t->rows = r ? r : t->rows;
	}
	t->pool = b->pool;
	t->npool = b->npool;
	b->pool = NULL;
	return t;
}

static void build_release(struct cfibuild *b)
{
	free(b->rows);
	free(b->pool);
	free(b->fdes);
}

struct cfitab *cfitab_from_section(uint16_t machine, const uint8_t *data, size_t len,
				   uint64_t addr, int eh)
{
	struct cfibuild b = { 0 };
	struct cfitab *t;

	if (set_machine(&b, machine) == 0)
		cfi_parse_section(&b, data, len, addr, eh);
	t = b.oom ? NULL : finish(&b);
	if (t && t->nrows)
		t->source = eh ? ".eh_frame" : ".debug_frame";
	build_release(&b);
	return t;
}

/* The named section's bytes and address; NULL when absent or without file contents. */
/* Section name's contents and address, or NULL.  A section the module cache stored
 * compressed is inflated into own (its d_buf is the caller's to free), the Elf left as it
 * was; libelf inflates it when libdeflate cannot. */
static Elf_Data *section(Elf *elf, const char *name, uint64_t *addr, Elf_Data *own)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) < 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;
		if (!gelf_getshdr(scn, &sh) || !(n = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    strcmp(n, name) != 0)
			continue;
		if (sh.sh_type == SHT_NOBITS || sh.sh_size == 0)
			return NULL;
		*addr = sh.sh_addr;
		if (sh.sh_flags & SHF_COMPRESSED) {
			size_t len, align;
			void *buf = secinflate(elf, scn, &len, &align);
			if (buf) {
				*own = (Elf_Data){ .d_buf = buf, .d_size = len, .d_type = ELF_T_BYTE,
						   .d_align = align, .d_version = EV_CURRENT };
				return own;
			}
			if (elf_compress(scn, 0, 0) < 0)
				return NULL;
		}
		return elf_getdata(scn, NULL);
	}
	return NULL;
}

/* .eh_frame of a file without section headers: PT_GNU_EH_FRAME's .eh_frame_hdr points at
 * it; it runs to its terminator, at most to the end of the segment that holds it. */
static Elf_Data *eh_frame_from_hdr(Elf *elf, uint64_t *addr)
{
	GElf_Phdr ph, hdr = { 0 };
	size_t n;

	if (elf_getphdrnum(elf, &n) < 0)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_GNU_EH_FRAME)
			hdr = ph;
	Elf_Data *d = hdr.p_filesz >= 8 ?
		elf_getdata_rawchunk(elf, (int64_t)hdr.p_offset, hdr.p_filesz, ELF_T_BYTE) : NULL;
	if (!d || d->d_size < 8)
		return NULL;
	const uint8_t *p = d->d_buf;
	/* version 1, then eh_frame_ptr; the linkers write it as a pc-relative sdata4 */
	if (p[0] != 1 || p[1] != 0x1b)
		return NULL;
	int32_t rel = (int32_t)((uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 |
				(uint32_t)p[7] << 24);
	uint64_t at = hdr.p_vaddr + 4 + (uint64_t)(int64_t)rel;
	for (size_t i = 0; i < n; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || at < ph.p_vaddr ||
		    at - ph.p_vaddr >= ph.p_filesz)
			continue;
		*addr = at;
		return elf_getdata_rawchunk(elf, (int64_t)(ph.p_offset + (at - ph.p_vaddr)),
					    ph.p_filesz - (at - ph.p_vaddr), ELF_T_BYTE);
	}
	return NULL;
}

struct cfilazy {
	uint8_t *data;		/* the section, copied: the ELF file is closed after the build */
	size_t len;
	uint64_t addr;		/* its module address (0 for .debug_frame) */
	int eh;
	struct cfifde *fdes;	/* sorted by lo, then by place in the section */
	size_t nfde;
	struct cfitab **sub;	/* per FDE: its rows as a full table, once looked up */
	size_t nrows, bytes;	/* of the sub-tables built */
};

static int fde_less(const void *a, const void *b)
{
	const struct cfifde *x = a, *y = b;

	return x->lo != y->lo ? x->lo < y->lo : x->seq < y->seq;
}

/* The lazy table of one section: its FDEs' ranges now, their rows when looked up. */
static struct cfitab *lazy_table(struct cfibuild *b, const uint8_t *data, size_t len,
				 uint64_t addr, int eh)
{
	struct cfitab *t = calloc(1, sizeof(*t));
	struct cfilazy *z = calloc(1, sizeof(*z));

	if (!t || !z || !(z->data = malloc(len ? len : 1)) ||
	    !(z->sub = calloc(b->nfde ? b->nfde : 1, sizeof(*z->sub)))) {
		if (z)
			free(z->data);
		free(z);
		free(t);
		return NULL;
	}
	memcpy(z->data, data, len);
	z->len = len;
	z->addr = addr;
	z->eh = eh;
	z->fdes = b->fdes;
	z->nfde = b->nfde;
	b->fdes = NULL;
	run_sort(z->fdes, z->nfde, sizeof(*z->fdes), fde_less);
	t->machine = b->machine;
	t->sp_reg = b->sp_reg;
	t->fp_reg = b->fp_reg;
	t->ra_reg = b->ra_reg;
	t->source = eh ? ".eh_frame" : ".debug_frame";
	t->lazy = z;
	return t;
}

/* The FDEs of .eh_frame, else of .debug_frame: listed (lazy), else interpreted into b. */
static struct cfitab *build_from(Elf *elf, int lazy)
{
	struct cfibuild b = { .indexing = lazy };
	GElf_Ehdr eh;
	Elf_Data *d, *sec = NULL, own[2] = { { 0 } };
	uint64_t addr = 0, sec_addr = 0;
	size_t shnum = 0;
	const char *source = "none";
	int sec_eh = 1;

	if (gelf_getehdr(elf, &eh) && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
	    eh.e_ident[EI_DATA] == ELFDATA2LSB && set_machine(&b, eh.e_machine) == 0) {
		elf_getshdrnum(elf, &shnum);
		d = shnum ? section(elf, ".eh_frame", &addr, &own[0]) :
			    eh_frame_from_hdr(elf, &addr);
		if (d && d->d_buf) {
			cfi_parse_section(&b, d->d_buf, d->d_size, addr, 1);
			sec = d;
			sec_addr = addr;
		}
		source = ".eh_frame";
		if (b.n == 0 && b.nfde == 0 && (d = section(elf, ".debug_frame", &addr, &own[1])) &&
		    d->d_buf) {
			cfi_parse_section(&b, d->d_buf, d->d_size, 0, 0);
			sec = d;
			sec_addr = 0;
			sec_eh = 0;
			source = ".debug_frame";
		}
	}
	struct cfitab *t = NULL;
	if (!b.oom && lazy && b.nfde)
		t = lazy_table(&b, sec->d_buf, sec->d_size, sec_addr, sec_eh);
	else if (!b.oom)
		t = finish(&b);
	if (t && t->nrows)
		t->source = source;
	build_release(&b);
	/* The lazy table keeps a copy of the section (lazy_table). */
	free(own[0].d_buf);
	free(own[1].d_buf);
	return t;
}

struct cfitab *cfitab_build(Elf *elf)
{
	return build_from(elf, 1);
}

struct cfitab *cfitab_lazy_from_section(uint16_t machine, const uint8_t *data, size_t len,
					uint64_t addr, int eh)
{
	struct cfibuild b = { .indexing = 1 };
	struct cfitab *t = NULL;

	if (set_machine(&b, machine) == 0)
		cfi_parse_section(&b, data, len, addr, eh);
	if (!b.oom)
		t = b.nfde ? lazy_table(&b, data, len, addr, eh) : finish(&b);
	build_release(&b);
	return t;
}

struct cfitab *cfitab_build_full(Elf *elf)
{
	return build_from(elf, 0);
}

int cfitab_has_rows(const struct cfitab *t)
{
	return t->lazy ? t->lazy->nfde > 0 : t->nrows > 0;
}

size_t cfitab_rows(const struct cfitab *t)
{
	return t->lazy ? t->lazy->nrows : t->nrows;
}

/* FDE i's rows, interpreted now if they were not; NULL when out of memory. */
static struct cfitab *sub_table(const struct cfitab *t, size_t i)
{
	struct cfilazy *z = t->lazy;
	struct cfibuild b = { 0 };

	if (z->sub[i])
		return z->sub[i];
	b.machine = t->machine;
	b.sp_reg = t->sp_reg;
	b.fp_reg = t->fp_reg;
	b.ra_reg = t->ra_reg;
	cfi_parse_entry(&b, z->data, z->len, z->addr, z->eh, z->fdes[i].off);
	struct cfitab *s = b.oom ? NULL : finish(&b);
	build_release(&b);
	if (s) {
		s->source = t->source;
		z->sub[i] = s;
		z->nrows += s->nrows;
		z->bytes += cfitab_bytes(s);
	}
	return s;
}

#define FDE_OVERLAP_SCAN 8	/* FDEs rarely overlap; look back a little in case they do */

const struct cfirow *cfitab_lookup(const struct cfitab *t, uint64_t vaddr,
				   const struct cfitab **owner)
{
	const struct cfilazy *z = t->lazy;

	*owner = t;
	if (!z)
		return cfitab_find(t, vaddr);
	size_t lo = 0, hi = z->nfde;	/* the first FDE starting above vaddr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (z->fdes[mid].lo <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo, stop = lo > FDE_OVERLAP_SCAN ? lo - FDE_OVERLAP_SCAN : 0; i-- > stop;) {
		if (vaddr >= z->fdes[i].hi)
			continue;
		struct cfitab *s = sub_table(t, i);
		if (!s)
			return NULL;
		*owner = s;
		return cfitab_find(s, vaddr);
	}
	return NULL;
}

const struct cfirow *cfitab_find(const struct cfitab *t, uint64_t vaddr)
{
	if (!t->nrows || vaddr < t->base || vaddr - t->base > UINT32_MAX)
		return NULL;
	uint32_t a = (uint32_t)(vaddr - t->base);
	size_t lo = 0, hi = t->nrows;	/* the answer is the last row with addr <= a */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->rows[mid].addr <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || t->rows[lo - 1].cfa == CFA_NONE)
		return NULL;
	return &t->rows[lo - 1];
}

const uint8_t *cfitab_expr(const struct cfitab *t, int32_t off, size_t *len)
{
	if (off < 0 || (size_t)off + 2 > t->npool)
		return NULL;
	size_t n = t->pool[off] | (size_t)t->pool[off + 1] << 8;
	if (n > t->npool - (size_t)off - 2)
		return NULL;
	*len = n;
	return t->pool + off + 2;
}

size_t cfitab_bytes(const struct cfitab *t)
{
	size_t n = sizeof(*t) + t->nrows * sizeof(*t->rows) + t->npool;
	const struct cfilazy *z = t->lazy;

	if (z)
		n += sizeof(*z) + z->len + z->nfde * (sizeof(*z->fdes) + sizeof(*z->sub)) +
		     z->bytes;
	return n;
}

void cfitab_free(struct cfitab *t)
{
	struct cfilazy *z;

	if (!t)
		return;
	if ((z = t->lazy)) {
		for (size_t i = 0; i < z->nfde; i++)
			cfitab_free(z->sub[i]);
		free(z->sub);
		free(z->fdes);
		free(z->data);
		free(z);
	}
	free(t->rows);
	free(t->pool);
	free(t);
}
