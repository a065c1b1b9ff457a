/* The reduced ELF copy of the module cache (see elfslim.h), written through libelf with
 * the layout chosen here: the headers, then the kept contents in section order. */
#include "elfslim.h"
#include "elfcopy.h"
#include "errbuf.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>
#ifdef RP_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

#define MIN_COMPRESS 64  /* smaller contents are not worth a compression header */
#define RAW_TABLE_MAX (512u << 10) /* larger non-DWARF contents are compressed too */

static Elf *
open_in(int fd)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	size_t n, str;
	if (e && (elf_kind(e) != ELF_K_ELF || elf_getshdrnum(e, &n) != 0 || n < 2 ||
		  n >= SHN_LORESERVE || elf_getshdrstrndx(e, &str) != 0 || str >= n)) {
		elf_end(e);
		return NULL;
	}
	return e;
}

/* 1 when the contents of section i (header sh, name) are kept. */
static int
kept(Elf *e, size_t i, const GElf_Shdr *sh, const char *name)
{
	size_t str;
	if (sh->sh_type == SHT_NOBITS || sh->sh_type == SHT_NULL || sh->sh_size == 0)
		return 0;
	if (sh->sh_type == SHT_SYMTAB || sh->sh_type == SHT_DYNSYM || sh->sh_type == SHT_NOTE)
		return 1;
	if (elf_getshdrstrndx(e, &str) == 0 && i == str)
		return 1;
	if (!name)
		return 0;
	static const char *const names[] = {
		".strtab", ".dynstr", ".eh_frame", ".gnu_debuglink", ".gnu_debugaltlink",
		".gnu_debugdata",
	};
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		if (strcmp(name, names[k]) == 0)
			return 1;
	return strncmp(name, ".debug_", 7) == 0 || strncmp(name, ".zdebug_", 8) == 0;
}

/* 1 when kept contents go compressed: the DWARF, and tables over RAW_TABLE_MAX; never the
 * small ones, the names (libelf reads them to find the others), the links (read as they
 * are) or what is compressed already.  A library's symbol, string and unwind tables stay as
 * they are below that size: compressing them was most of the CPU a recording's start spent
 * on its copies (libc's 277 KB, 1.9 ms) for some 160 KB of cache each, where a large one
 * (libLLVM's several MB) saves megabytes. */
static int
compressible(Elf *e, size_t i, const GElf_Shdr *sh, const char *name)
{
	size_t str;
	if (sh->sh_size < MIN_COMPRESS || (sh->sh_flags & SHF_COMPRESSED) ||
	    sh->sh_type == SHT_NOTE || (elf_getshdrstrndx(e, &str) == 0 && i == str))
		return 0;
	if (name && (strncmp(name, ".gnu_debug", 10) == 0 || strncmp(name, ".zdebug_", 8) == 0))
		return 0;
	return (name && strncmp(name, ".debug_", 7) == 0) || sh->sh_size > RAW_TABLE_MAX;
}

int
elfslim_measure(int fd, uint64_t *kept_bytes, uint64_t *size)
{
	struct stat st;
	Elf *e = fstat(fd, &st) == 0 ? open_in(fd) : NULL;
	size_t str;
	if (!e)
		return -1;
	elf_getshdrstrndx(e, &str);
	*kept_bytes = 0;
	*size = (uint64_t)st.st_size;
	for (Elf_Scn *s = NULL; (s = elf_nextscn(e, s));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(s, &sh))
			continue;
		if (kept(e, elf_ndxscn(s), &sh, elf_strptr(e, str, sh.sh_name)))
			*kept_bytes += sh.sh_size;
	}
	elf_end(e);
	return 0;
}

/* A zlib stream of in into out[0, *n); 0, or -1 when it does not fit.  Level 1: collect
 * copies while the target runs; the later levels gain little on symbol names and unwind
 * tables.  libdeflate, when built with it, writes the same format in half zlib's time
 * (libc's kept 277 KB: 1.9 ms against 4.4), a little smaller. */
static int
zlib_stream(const Elf_Data *in, uint8_t *out, size_t *n)
{
#ifdef RP_HAVE_LIBDEFLATE
	struct libdeflate_compressor *c = libdeflate_alloc_compressor(1);
	size_t len = c ? libdeflate_zlib_compress(c, in->d_buf, in->d_size, out, *n) : 0;
	libdeflate_free_compressor(c);
	if (len) {
		*n = len;
		return 0;
	}
	if (c)
		return -1;	/* did not fit */
#endif
	uLongf zn = (uLongf)*n;
	if (compress2(out, &zn, in->d_buf, (uLong)in->d_size, 1) != Z_OK)
		return -1;
	*n = (size_t)zn;
	return 0;
}

/* The contents of one section compressed as SHF_COMPRESSED wants them: a compression
 * header (of the file's class) then a zlib stream.  NULL when not smaller or on failure. */
static uint8_t *
deflate_section(int cls, const Elf_Data *in, uint64_t align, size_t *len)
{
	size_t hdr = cls == ELFCLASS64 ? sizeof(Elf64_Chdr) : sizeof(Elf32_Chdr);
	size_t n = compressBound((uLong)in->d_size);
	uint8_t *out = malloc(hdr + n);
	if (!out)
		return NULL;
	if (zlib_stream(in, out + hdr, &n) < 0 || hdr + n >= in->d_size) {
		free(out);
		return NULL;
	}
	if (cls == ELFCLASS64) {
		Elf64_Chdr c = { .ch_type = ELFCOMPRESS_ZLIB, .ch_size = in->d_size,
				 .ch_addralign = align };
		memcpy(out, &c, sizeof(c));
	} else {
		Elf32_Chdr c = { .ch_type = ELFCOMPRESS_ZLIB, .ch_size = (Elf32_Word)in->d_size,
				 .ch_addralign = (Elf32_Word)align };
		memcpy(out, &c, sizeof(c));
	}
	*len = hdr + n;
	return out;
}

/* Copies section s of e as section number elf_ndxscn(s) of o, placed at *off (moved past
 * it): its contents when they are kept (compressed when that pays; the buffer goes to
 * bufs), else as SHT_NOBITS.  0, or -1 with err. */
static int
copy_section(Elf *e, Elf *o, Elf_Scn *s, size_t str, uint64_t *off, uint8_t **bufs,
	     size_t *nbufs, char *err, size_t errlen)
{
	int cls = gelf_getclass(e);
	size_t i = elf_ndxscn(s);
	GElf_Shdr sh;
	Elf_Scn *t = elf_newscn(o);
	if (!gelf_getshdr(s, &sh) || !t || elf_ndxscn(t) != i)
		return errbuf_fail(err, errlen, "cannot copy section %zu", i);
	const char *name = elf_strptr(e, str, sh.sh_name);
	Elf_Data *d = kept(e, i, &sh, name) ? elf_rawdata(s, NULL) : NULL;
	if (!d || !d->d_buf || d->d_size != sh.sh_size) {
		sh.sh_type = SHT_NOBITS;
		sh.sh_offset = *off;
	} else {
		Elf_Data *nd = elf_newdata(t);
		size_t len = d->d_size;
		uint8_t *z = compressible(e, i, &sh, name) ?
				     deflate_section(cls, d, sh.sh_addralign, &len) : NULL;
		if (!nd) {
			free(z);
			return errbuf_fail(err, errlen, "cannot copy section %zu", i);
		}
		if (z) {
			bufs[(*nbufs)++] = z;
			/* A compressed section may not be SHF_ALLOC (gABI). */
			sh.sh_flags = (sh.sh_flags & ~(uint64_t)SHF_ALLOC) | SHF_COMPRESSED;
			sh.sh_addralign = cls == ELFCLASS64 ? 8 : 4;
		}
		nd->d_buf = z ? z : d->d_buf;
		nd->d_size = len;
		nd->d_type = ELF_T_BYTE;
		nd->d_align = 1;
		*off = elfcopy_align(*off, sh.sh_addralign);
		sh.sh_offset = *off;
		sh.sh_size = len;
		*off += len;
	}
	if (!gelf_update_shdr(t, &sh))
		return errbuf_fail(err, errlen, "cannot copy section %zu", i);
	return 0;
}

int
elfslim_write(int in, int out, char *err, size_t errlen)
{
	Elf *e = open_in(in), *o = NULL;
	uint8_t **bufs = NULL;
	size_t nscn = 0, str = 0, nbufs = 0;
	int rc = -1;
	GElf_Ehdr eh;

	if (!e || !gelf_getehdr(e, &eh))
		return errbuf_fail(err, errlen, "not an ELF file with section headers");
	elf_getshdrnum(e, &nscn);
	elf_getshdrstrndx(e, &str);
	uint64_t off;
	if (!(bufs = calloc(nscn, sizeof(*bufs))) || elfcopy_start(e, out, &o, &eh, &off) < 0) {
		errbuf_fail(err, errlen, "cannot start the copy: %s", elf_errmsg(-1));
		goto done;
	}
	for (Elf_Scn *s = NULL; (s = elf_nextscn(e, s));)
		if (copy_section(e, o, s, str, &off, bufs, &nbufs, err, errlen) < 0)
			goto done;
	if (elfcopy_finish(o, &eh, off, nscn) < 0) {
		errbuf_fail(err, errlen, "cannot write the copy: %s", elf_errmsg(-1));
		goto done;
	}
	rc = 0;
done:
	if (o)
		elf_end(o);
	for (size_t i = 0; i < nbufs; i++)
		free(bufs[i]);
	free(bufs);
	elf_end(e);
	return rc;
}
