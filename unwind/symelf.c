/* symelf: build id, segments, debuglink and symbol tables from ELF (see symelf.h). */
#include "symelf.h"

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dbgindex.h"
#include "keysort.h"
#include "runsort.h"
#include "secinflate.h"

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

/* Ends of sections by index, looked up once each: a symbol table names a few sections
 * thousands of times. */
struct secends {
	Elf *elf;
	GElf_Section last;
	uint64_t last_end;
};

static uint64_t section_end(struct secends *se, GElf_Section shndx)
{
	GElf_Shdr sh;
	Elf_Scn *scn;

	if (shndx >= SHN_LORESERVE)
		return UINT64_MAX;
	if (shndx == se->last)
		return se->last_end;
	se->last = shndx;
	se->last_end = (scn = elf_getscn(se->elf, shndx)) && gelf_getshdr(scn, &sh) ?
			       sh.sh_addr + sh.sh_size : UINT64_MAX;
	return se->last_end;
}

/* Prefer a sized symbol, then a global one, then a weak one. */
static int sym_prio(unsigned char info, uint64_t size)
{
	int bind = GELF_ST_BIND(info);

	return (size ? 4 : 0) + (bind == STB_GLOBAL ? 2 : bind == STB_WEAK);
}

static int host_order(Elf *elf)
{
	const char *id = elf_getident(elf, NULL);
	static const union { uint16_t u; uint8_t b[2]; } probe = { 1 };

	return id && id[EI_DATA] == (probe.b[0] ? ELFDATA2LSB : ELFDATA2MSB);
}

/* A section's bytes as the file holds them, in a buffer of the caller's with one NUL after
 * them (so a name at any offset of a string table ends inside it).  A section the module
 * cache stored compressed is inflated with libdeflate (secinflate.h), else by libelf; the
 * file is not changed.  NULL when it cannot be read. */
static char *section_copy(Elf_Scn *scn, Elf *elf, size_t *len)
{
	GElf_Shdr sh;
	Elf_Data *d;
	size_t align, n;
	char *out, *in;

	if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
		return NULL;
	if ((sh.sh_flags & SHF_COMPRESSED) && (in = secinflate(elf, scn, &n, &align))) {
		if (!(out = realloc(in, n + 1))) {
			free(in);
			return NULL;
		}
		out[n] = 0;
		*len = n;
		return out;
	}
	if (((sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0) ||
	    !(d = elf_getdata(scn, NULL)) || (!d->d_buf && d->d_size))
		return NULL;
	if (!(out = malloc(d->d_size + 1)))
		return NULL;
	if (d->d_size)
		memcpy(out, d->d_buf, d->d_size);
	out[d->d_size] = 0;
	*len = d->d_size;
	return out;
}

/* One symbol table: what it reads from each entry. */
struct symread {
	Elf *elf;
	const char *strs;	/* its string table, NUL-terminated at strsize */
	size_t strsize;
	struct secends ends;
	struct rawvec *rv;
};

static int add_symbol(struct symread *sr, uint32_t name, unsigned char info, GElf_Section shndx,
		      uint64_t value, uint64_t size)
{
	int type = GELF_ST_TYPE(info);

	if ((type != STT_FUNC && type != STT_GNU_IFUNC) || shndx == SHN_UNDEF || value == 0 ||
	    name >= sr->strsize || !sr->strs[name])
		return 0;
	struct rawsym r = {
		.lo = value, .size = size, .limit = section_end(&sr->ends, shndx),
		.sys = sr->strs + name, .prio = sym_prio(info, size),
	};
	return rawvec_push(sr->rv, &r);
}

/* The entries of symbol table scn.  A 64-bit table is read as an array: libelf's data of
 * it, or, compressed in this host's byte order, its bytes inflated with libdeflate; a
 * 32-bit one through gelf_getsym. */
static int read_symbols(struct symread *sr, Elf_Scn *scn)
{
	Elf *elf = sr->elf;
	int compressed;
	GElf_Shdr sh;
	Elf_Data *d;
	size_t n, align;

	if (!gelf_getshdr(scn, &sh))
		return 0;
	compressed = (sh.sh_flags & SHF_COMPRESSED) != 0;
	if (gelf_getclass(elf) == ELFCLASS64) {
		void *raw = compressed && host_order(elf) ? secinflate(elf, scn, &n, &align) : NULL;
		if (!raw && ((compressed && elf_compress(scn, 0, 0) < 0) ||
			     !(d = elf_getdata(scn, NULL)) || !d->d_buf))
			return 0;
		/* malloc'ed, or libelf's memory form (aligned for its type) */
		const Elf64_Sym *v = raw ? raw : d->d_buf;
		n = raw ? n : d->d_size;
		int rc = 0;
		for (size_t i = 1; rc == 0 && i < n / sizeof(Elf64_Sym); i++)
			rc = add_symbol(sr, v[i].st_name, v[i].st_info, v[i].st_shndx,
					v[i].st_value, v[i].st_size);
		free(raw);
		return rc;
	}
	size_t esz = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
	if ((compressed && elf_compress(scn, 0, 0) < 0) || !(d = elf_getdata(scn, NULL)) ||
	    esz == 0)
		return 0;
	for (size_t i = 1; i < d->d_size / esz; i++) {
		GElf_Sym s;
		if (!gelf_getsym(d, (int)i, &s))
			break;
		if (add_symbol(sr, s.st_name, s.st_info, s.st_shndx, s.st_value, s.st_size) < 0)
			return -1;
	}
	return 0;
}

/* a before b among symbols at one address: the better symbol first. */
static int rawsym_tie(const void *a, const void *b)
{
	const struct rawsym *x = a, *y = b;

	if (x->prio != y->prio)
		return x->prio > y->prio;
	/* Among equals the public name: iopl rather than glibc's __GI_iopl. */
	return strspn(x->sys, "_") < strspn(y->sys, "_");
}

/* a before b: by address, then rawsym_tie (run_sort's order, when key_sort has no memory). */
static int rawsym_less(const void *a, const void *b)
{
	const struct rawsym *x = a, *y = b;

	return x->lo != y->lo ? x->lo < y->lo : rawsym_tie(a, b);
}

static int keep_strings(struct symtab_index *idx, char *strs)
{
	char **v = realloc(idx->strs, (idx->nstrs + 1) * sizeof(*v));

	if (!v)
		return -1;
	idx->strs = v;
	v[idx->nstrs++] = strs;
	return 0;
}

int symtab_index_build(struct symtab_index *idx, Elf *elf)
{
	struct rawvec rv = { 0 };
	Elf_Scn *scn = NULL, *strscn;
	GElf_Shdr sh;

	memset(idx, 0, sizeof(*idx));
	while ((scn = elf_nextscn(elf, scn))) {
		struct symread sr = { .elf = elf, .rv = &rv, .ends = { elf, SHN_UNDEF, 0 } };
		char *strs;
		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !(strscn = elf_getscn(elf, sh.sh_link)) ||
		    !(strs = section_copy(strscn, elf, &sr.strsize)))
			continue;
		/* The names stay where they are: the index points into its copy of the table. */
		if (keep_strings(idx, strs) < 0) {
			free(strs);
			goto fail;
		}
		if (idx->nstrs == 1) {
			idx->str0_scn = (uint32_t)elf_ndxscn(strscn);
			idx->str0_size = sr.strsize;
		}
		sr.strs = strs;
		if (read_symbols(&sr, scn) < 0)
			goto fail;
	}
	if (rv.n == 0)
		return 0;
	if (key_sort(rv.v, rv.n, sizeof(*rv.v), offsetof(struct rawsym, lo), rawsym_tie) < 0)
		run_sort(rv.v, rv.n, sizeof(*rv.v), rawsym_less);
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

int symtab_index_from(struct symtab_index *idx, Elf *elf, const struct dbgix_func *f, size_t n,
		      uint32_t strndx, uint64_t strsize)
{
	Elf_Scn *scn = elf_getscn(elf, strndx);
	GElf_Shdr sh;
	size_t len = 0;
	char *strs;

	memset(idx, 0, sizeof(*idx));
	if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type != SHT_STRTAB ||
	    !(strs = section_copy(scn, elf, &len)))
		return -1;
	if (len != strsize || keep_strings(idx, strs) < 0) {
		if (idx->nstrs == 0)
			free(strs);
		symtab_index_free(idx);
		return -1;
	}
	if (!(idx->v = calloc(n ? n : 1, sizeof(*idx->v)))) {
		symtab_index_free(idx);
		return -1;
	}
	idx->str0_scn = strndx;
	idx->str0_size = len;
	/* section_copy ends the table with a NUL: a name inside it is a string */
	for (size_t i = 0; i < n; i++)
		idx->v[i] = (struct symfunc){ .lo = f[i].lo, .hi = f[i].hi,
					      .sys = strs + (f[i].name < len ? f[i].name : len) };
	idx->n = n;
	return 0;
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
	for (size_t i = 0; i < idx->nstrs; i++)
		free(idx->strs[i]);
	free(idx->strs);
	memset(idx, 0, sizeof(*idx));
}
