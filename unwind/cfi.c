/* cfi: a module's unwind rows, sorted once; the per-module cache (see cfi.h). */
#include "cfi.h"

#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "cfibuild.h"
#include "debugfile.h"
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

static int rawrow_less(const struct rawrow *x, const struct rawrow *y)
{
	return x->addr != y->addr ? x->addr < y->addr : x->seq < y->seq;
}

static int rawrow_cmp(const void *a, const void *b)
{
	const struct rawrow *x = a, *y = b;

	return rawrow_less(x, y) ? -1 : rawrow_less(y, x);
}

/* Merges the sorted runs [a, m) and [m, e) of from into to. */
static void merge_runs(const struct rawrow *from, struct rawrow *to, size_t a, size_t m, size_t e)
{
	size_t i = a, j = m, k = a;

	while (i < m && j < e)
		to[k++] = rawrow_less(&from[j], &from[i]) ? from[j++] : from[i++];
	memcpy(to + k, from + i, (m - i) * sizeof(*to));
	k += m - i;
	memcpy(to + k, from + j, (e - j) * sizeof(*to));
}

/* Sorts rows by (addr, seq).  Each FDE's rows come in address order and a linker writes the
 * FDEs mostly in the order of the code, so the rows fall into few ascending runs: merging
 * runs costs a fraction of a general sort on a big library's hundred thousand rows.  seq is
 * unique, so the order is the one qsort gives.  Out of memory: qsort. */
void cfi_sort_rows(struct rawrow *v, size_t n)
{
	size_t *cut, ncut = 0, cap = 64;
	struct rawrow *tmp;

	if (!(cut = malloc(cap * sizeof(*cut))))
		goto general;
	cut[ncut++] = 0;
	for (size_t i = 1; i < n; i++) {
		if (!rawrow_less(&v[i], &v[i - 1]))
			continue;
		if (ncut + 2 > cap) {
			size_t *c = realloc(cut, 2 * cap * sizeof(*cut));
			if (!c)
				goto general;
			cut = c;
			cap *= 2;
		}
		cut[ncut++] = i;
	}
	cut[ncut] = n;	/* run r is [cut[r], cut[r + 1]) */
	if (ncut == 1) {
		free(cut);
		return;
	}
	if (!(tmp = malloc(n * sizeof(*tmp))))
		goto general;
	struct rawrow *from = v, *to = tmp;
	while (ncut > 1) {	/* merge runs pairwise until one is left */
		size_t k = 0;
		for (size_t r = 0; r < ncut; r += 2) {
			size_t e = r + 2 <= ncut ? cut[r + 2] : cut[r + 1];
			if (r + 1 < ncut)
				merge_runs(from, to, cut[r], cut[r + 1], e);
			else
				memcpy(to + cut[r], from + cut[r], (e - cut[r]) * sizeof(*to));
			cut[k++] = cut[r];
		}
		cut[k] = n;
		ncut = k;
		struct rawrow *t = from;
		from = to;
		to = t;
	}
	if (from != v)
		memcpy(v, from, n * sizeof(*v));
	free(tmp);
	free(cut);
	return;
general:
	free(cut);
	qsort(v, n, sizeof(*v), rawrow_cmp);
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
static Elf_Data *section(Elf *elf, const char *name, uint64_t *addr)
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
		if ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
			return NULL;
		*addr = sh.sh_addr;
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

struct cfitab *cfitab_build(Elf *elf)
{
	struct cfibuild b = { 0 };
	GElf_Ehdr eh;
	Elf_Data *d;
	uint64_t addr = 0;
	size_t shnum = 0;
	const char *source = "none";

	if (gelf_getehdr(elf, &eh) && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
	    eh.e_ident[EI_DATA] == ELFDATA2LSB && set_machine(&b, eh.e_machine) == 0) {
		elf_getshdrnum(elf, &shnum);
		d = shnum ? section(elf, ".eh_frame", &addr) : eh_frame_from_hdr(elf, &addr);
		if (d && d->d_buf)
			cfi_parse_section(&b, d->d_buf, d->d_size, addr, 1);
		source = ".eh_frame";
		if (b.n == 0 && (d = section(elf, ".debug_frame", &addr)) && d->d_buf) {
			cfi_parse_section(&b, d->d_buf, d->d_size, 0, 0);
			source = ".debug_frame";
		}
	}
	struct cfitab *t = b.oom ? NULL : finish(&b);
	if (t && t->nrows)
		t->source = source;
	build_release(&b);
	return t;
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
	return sizeof(*t) + t->nrows * sizeof(*t->rows) + t->npool;
}

void cfitab_free(struct cfitab *t)
{
	if (!t)
		return;
	free(t->rows);
	free(t->pool);
	free(t);
}
