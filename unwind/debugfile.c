/* debugfile: separate debug file search (see debugfile.h for the order). */
#include "debugfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "opener.h"
#include "symelf.h"

#define SYS_DEBUG_DIR "/usr/lib/debug"

int elffile_open(struct elffile *f, const char *path)
{
	memset(f, 0, sizeof(*f));
	f->fd = -1;
	elf_version(EV_CURRENT);
	/* Outside its Landlock rules the stage asks the module opener (opener.h). */
	if ((f->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 &&
	    (errno != EACCES || (f->fd = opener_open(path)) < 0))
		return -1;
	/* ELF_C_READ_MMAP: the kernel pages in only the sections we touch. */
	if (!(f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL)) || elf_kind(f->elf) != ELF_K_ELF ||
	    !(f->path = strdup(path))) {
		elffile_close(f);
		return -1;
	}
	return 0;
}

void elffile_close(struct elffile *f)
{
	if (f->elf)
		elf_end(f->elf);
	if (f->fd >= 0)
		close(f->fd);
	free(f->path);
	memset(f, 0, sizeof(*f));
	f->fd = -1;
}

void build_id_hex(const uint8_t *id, size_t len, char *buf)
{
	static const char hex[] = "0123456789abcdef";

	for (size_t i = 0; i < len; i++) {
		buf[2 * i] = hex[id[i] >> 4];
		buf[2 * i + 1] = hex[id[i] & 15];
	}
	buf[2 * len] = '\0';
}

static int file_crc(int fd, uint32_t *out)
{
	unsigned char buf[65536];
	uLong crc = crc32(0, Z_NULL, 0);
	ssize_t n;
	off_t off = 0;

	while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
		crc = crc32(crc, buf, (uInt)n);
		off += n;
	}
	*out = (uint32_t)crc;
	return n < 0 ? -1 : 0;
}

static int useful(Elf *elf)
{
	return symelf_has_section(elf, ".debug_info") || symelf_has_section(elf, ".zdebug_info") ||
	       symelf_has_section(elf, ".symtab");
}

/* Opens one candidate and keeps it when it belongs to the module (see debugfile.h). */
static int try_candidate(const struct debugfile_query *q, const char *path, int check_crc,
			 struct elffile *out)
{
	uint8_t id[SYM_BUILD_ID_MAX];
	size_t len;
	uint32_t crc;

	if (elffile_open(out, path) < 0)
		return -1;
	if (q->build_id_len) {
		len = symelf_build_id(out->elf, id);
		if (len != q->build_id_len || memcmp(id, q->build_id, len) != 0)
			goto reject;
	} else if (check_crc && (file_crc(out->fd, &crc) < 0 || crc != q->crc)) {
		goto reject;
	}
	if (useful(out->elf))
		return 0;
reject:
	elffile_close(out);
	return -1;
}

static int try_fmt(const struct debugfile_query *q, int check_crc, struct elffile *out,
		   const char *fmt, const char *a, const char *b)
{
	char path[4096];
	int n = snprintf(path, sizeof(path), fmt, a, b);

	if (n < 0 || (size_t)n >= sizeof(path))
		return -1;
	return try_candidate(q, path, check_crc, out);
}

static int find_by_link(const struct debugfile_query *q, const char *dir, struct elffile *out)
{
	const char *l = q->debuglink;

	if (!l || strchr(l, '/'))	/* a link is a plain name; refuse path tricks */
		return -1;
	if (try_fmt(q, 1, out, "%s/%s", dir, l) == 0 ||
	    try_fmt(q, 1, out, "%s/.debug/%s", dir, l) == 0 ||
	    try_fmt(q, 1, out, SYS_DEBUG_DIR "%s/%s", dir, l) == 0)
		return 0;
	return -1;
}

/* ROOT/.build-id/xx/restSUFFIX */
static int try_bid(const struct debugfile_query *q, const char *root, const char *sub,
		   const char *rest, const char *suffix, struct elffile *out)
{
	char path[4096];
	int n = snprintf(path, sizeof(path), "%s/.build-id/%s/%s%s", root, sub, rest, suffix);

	if (n < 0 || (size_t)n >= sizeof(path))
		return -1;
	return try_candidate(q, path, 0, out);
}

static int find_in_dir(const struct debugfile_query *q, const char *d, const char *hex,
		       const char *base, struct elffile *out)
{
	if (hex[0]) {
		char sub[3] = { hex[0], hex[1], '\0' };

		if (try_bid(q, d, sub, hex + 2, ".debug", out) == 0 ||
		    try_bid(q, d, sub, hex + 2, "", out) == 0 ||
		    try_fmt(q, 0, out, "%s/%s/debuginfo", d, hex) == 0)
			return 0;
	}
	if (base && (try_fmt(q, 0, out, "%s/%s.debug", d, base) == 0 ||
		     try_fmt(q, 0, out, "%s/%s", d, base) == 0))
		return 0;
	if (q->debuglink && !strchr(q->debuglink, '/') &&
	    try_fmt(q, !q->build_id_len, out, "%s/%s", d, q->debuglink) == 0)
		return 0;
	return -1;
}

int debugfile_find(const struct debugfile_query *q, struct elffile *out)
{
	char hex[2 * SYM_BUILD_ID_MAX + 1] = "";
	char dir[4096];
	const char *base = NULL;

	if (q->build_id_len >= 2 && q->build_id_len <= SYM_BUILD_ID_MAX)
		build_id_hex(q->build_id, q->build_id_len, hex);
	if (q->path && q->path[0] == '/' && strlen(q->path) < sizeof(dir)) {
		strcpy(dir, q->path);
		*strrchr(dir, '/') = '\0';
		base = strrchr(q->path, '/') + 1;
		if (find_by_link(q, dir, out) == 0 ||
		    try_fmt(q, 0, out, SYS_DEBUG_DIR "%s%s", q->path, "") == 0 ||
		    try_fmt(q, 0, out, SYS_DEBUG_DIR "%s%s", q->path, ".debug") == 0)
			return 0;
	}
	if (hex[0]) {
		char sub[3] = { hex[0], hex[1], '\0' };
		if (try_bid(q, SYS_DEBUG_DIR, sub, hex + 2, ".debug", out) == 0)
			return 0;
	}
	for (size_t i = 0; i < q->ndirs; i++) {
		if (q->dirs[i] && q->dirs[i][0] && find_in_dir(q, q->dirs[i], hex, base, out) == 0)
			return 0;
	}
	return -1;
}
