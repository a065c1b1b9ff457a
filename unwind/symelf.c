/* symelf: build id, segments, debuglink and symbol tables from ELF (see symelf.h). */
#include "symelf.h"

#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#define NT_GNU_BUILD_ID_TYPE 3

static size_t note_build_id(Elf_Data *d, uint8_t out[SYM_BUILD_ID_MAX])
{
	GElf_Nhdr nh;
	size_t off = 0, next, name_off, desc_off;

	while (d && off < d->d_size &&
	       (next = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID_TYPE && nh.n_namesz == 4 &&
		    memcmp((char *)d->d_buf + name_off, "GNU", 4) == 0 &&
		    nh.n_descsz > 0 && nh.n_descsz <= SYM_BUILD_ID_MAX) {
			memcpy(out, (char *)d->d_buf + desc_off, nh.n_descsz);
			return nh.n_descsz;
		}
		off = next;
	}
	return 0;
}

size_t symelf_build_id(Elf *elf, uint8_t out[SYM_BUILD_ID_MAX])
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t n, len;

	while ((scn = elf_nextscn(elf, scn))) {
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_NOTE &&
		    (len = note_build_id(elf_getdata(scn, NULL), out)))
			return len;
	}
	/* A file without section headers may still have the note in a PT_NOTE segment. */
	if (elf_getphdrnum(elf, &n) < 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		Elf_Data *d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz,
						   ELF_T_NHDR);
		if ((len = note_build_id(d, out)))
			return len;
	}
	return 0;
}

int symelf_segments(Elf *elf, struct symseg **out)
{
	size_t n, k = 0;

	*out = NULL;
	if (elf_getphdrnum(elf, &n) < 0)
		return -1;
	if (n == 0)
		return 0;
	if (!(*out = calloc(n, sizeof(**out))))
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		/* A separate debug file keeps the headers but not the bytes (filesz may be 0
		 * there); the mapping still covered memsz worth of the original file. */
		(*out)[k].offset = ph.p_offset;
		(*out)[k].vaddr = ph.p_vaddr;
		(*out)[k].size = ph.p_filesz ? ph.p_filesz : ph.p_memsz;
		k++;
	}
	return (int)k;
}

static Elf_Scn *find_section(Elf *elf, const char *name, GElf_Shdr *sh)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) < 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *s;
		if (gelf_getshdr(scn, sh) && (s = elf_strptr(elf, shstrndx, sh->sh_name)) &&
		    strcmp(s, name) == 0)
			return scn;
	}
	return NULL;
}

int symelf_has_section(Elf *elf, const char *name)
{
	GElf_Shdr sh;
	Elf_Scn *scn = find_section(elf, name, &sh);

	return scn && sh.sh_type != SHT_NOBITS && sh.sh_size > 0;
}

const char *symelf_debuglink(Elf *elf, uint32_t *crc)
{
	GElf_Shdr sh;
	Elf_Scn *scn = find_section(elf, ".gnu_debuglink", &sh);
	Elf_Data *d = scn && sh.sh_type != SHT_NOBITS ? elf_getdata(scn, NULL) : NULL;

	if (!d || !d->d_buf || d->d_size < 8)
		return NULL;
	const char *name = d->d_buf;
	size_t len = strnlen(name, d->d_size);
	size_t crc_off = (len + 4) & ~(size_t)3;	/* name, NUL, pad to 4 */

	if (len == 0 || crc_off + 4 > d->d_size)
		return NULL;
	uint32_t v;
	memcpy(&v, (const char *)d->d_buf + crc_off, 4);	/* already in host order */
	*crc = v;
	return name;
}

struct rawsym {
	uint64_t lo, size, limit;	/* limit: end of the symbol's section */
	const char *sys;
	int prio;			/* higher wins among symbols at one address */
};

struct rawvec {
	struct rawsym *v;
	size_t n, cap;
};

static int rawvec_push(struct rawvec *rv, const struct rawsym *s)
{
	if (rv->n == rv->cap) {
		size_t cap = rv->cap ? rv->cap * 2 : 256;
		struct rawsym *v = realloc(rv->v, cap * sizeof(*v));
		if (!v)
			return -1;
		rv->v = v;
		rv->cap = cap;
	}
	rv->v[rv->n++] = *s;
	return 0;
}

static uint64_t section_end(Elf *elf, GElf_Section shndx)
{
	GElf_Shdr sh;
	Elf_Scn *scn = elf_getscn(elf, shndx);

	if (shndx >= SHN_LORESERVE || !scn || !gelf_getshdr(scn, &sh))
		return UINT64_MAX;
	return sh.sh_addr + sh.sh_size;
}

/* Prefer a sized symbol, then a global one, then a weak one. */
static int sym_prio(const GElf_Sym *s)
{
	int bind = GELF_ST_BIND(s->st_info);

	return (s->st_size ? 4 : 0) + (bind == STB_GLOBAL ? 2 : bind == STB_WEAK);
}

static int read_symbols(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct strpool *pool,
			struct rawvec *rv)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t esz = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);

	if (!d || esz == 0)
		return 0;
	for (size_t i = 1; i < d->d_size / esz; i++) {
		GElf_Sym s;
		int type;
		const char *name;

		if (!gelf_getsym(d, (int)i, &s))
			break;
		type = GELF_ST_TYPE(s.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s.st_shndx == SHN_UNDEF ||
		    s.st_value == 0)
			continue;
		if (!(name = elf_strptr(elf, sh->sh_link, s.st_name)) || !*name)
			continue;
		struct rawsym r = {
			.lo = s.st_value, .size = s.st_size, .limit = section_end(elf, s.st_shndx),
			.sys = strpool_cstr(pool, name), .prio = sym_prio(&s),
		};
		if (!r.sys || rawvec_push(rv, &r) < 0)
			return -1;
	}
	return 0;
}

static int rawsym_cmp(const void *a, const void *b)
{
	const struct rawsym *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->prio != y->prio)
		return y->prio - x->prio;	/* best first */
	/* Among equals the public name: iopl rather than glibc's __GI_iopl. */
	return (int)strspn(x->sys, "_") - (int)strspn(y->sys, "_");
}

/* A section the module cache stored compressed (SHF_COMPRESSED) is inflated in memory
 * first; the file is not changed.  0, or -1 when that fails. */
static int inflated(Elf_Scn *scn, GElf_Shdr *sh)
{
	if (!(sh->sh_flags & SHF_COMPRESSED))
		return 0;
	if (elf_compress(scn, 0, 0) < 0 || !gelf_getshdr(scn, sh))
		return -1;
	return 0;
}

int symtab_index_build(struct symtab_index *idx, Elf *elf, struct strpool *pool)
{
	struct rawvec rv = { 0 };
	Elf_Scn *scn = NULL;
	GElf_Shdr sh, strsh;

	memset(idx, 0, sizeof(*idx));
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		Elf_Scn *strs = elf_getscn(elf, sh.sh_link);
		if (inflated(scn, &sh) < 0 || !strs || !gelf_getshdr(strs, &strsh) ||
		    inflated(strs, &strsh) < 0)
			continue;
		if (read_symbols(elf, scn, &sh, pool, &rv) < 0)
			goto fail;
	}
	if (rv.n == 0)
		return 0;
	qsort(rv.v, rv.n, sizeof(*rv.v), rawsym_cmp);
	if (!(idx->v = calloc(rv.n, sizeof(*idx->v))))
		goto fail;
	for (size_t i = 0; i < rv.n; i++) {
		const struct rawsym *r = &rv.v[i];
		if (i > 0 && r->lo == rv.v[i - 1].lo)
			continue;	/* an alias; the best one came first */
		uint64_t next = UINT64_MAX;
		for (size_t j = i + 1; j < rv.n; j++) {
			if (rv.v[j].lo != r->lo) {
				next = rv.v[j].lo;
				break;
			}
		}
		struct symfunc *f = &idx->v[idx->n++];
		f->lo = r->lo;
		f->hi = r->size ? r->lo + r->size : (next < r->limit ? next : r->limit);
		f->sys = r->sys;
	}
	free(rv.v);
	return 0;
fail:
	free(rv.v);
	symtab_index_free(idx);
	return -1;
}

struct symfunc *symtab_index_find(const struct symtab_index *idx, uint64_t addr)
{
	size_t lo = 0, hi = idx->n;

	while (lo < hi) {	/* first symbol starting above addr */
		size_t mid = lo + (hi - lo) / 2;
		if (idx->v[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr >= idx->v[lo - 1].hi)
		return NULL;
	return &idx->v[lo - 1];
}

void symtab_index_free(struct symtab_index *idx)
{
	if (!idx)
		return;
	free(idx->v);
	idx->v = NULL;
	idx->n = 0;
}
