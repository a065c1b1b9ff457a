/* dbgcache: inflated copies of separate debug files, by build id (see dbgcache.h). */
#include "dbgcache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dbgindex.h"
#include "elfcopy.h"
#include "fsutil.h"
#include "symelf.h"

#define SUFFIX ".debug"
#define INDEX_SUFFIX ".index"
#define STALE_TMP_SECONDS 600	/* a temporary file this old was left by a run that died */

struct dbgcache {
	char *dir;
	uint64_t max_bytes;
	struct dbgcache_stats st;
};

/* mkdir -p with mode 0700 for what it creates. */
static int make_dirs(const char *dir)
{
	char *p = strdup(dir);
	int rc = 0;

	if (!p)
		return -1;
	for (char *s = p + 1; rc == 0; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;
		*s = '\0';
		if (mkdir(p, 0700) < 0 && errno != EEXIST)
			rc = -1;
		*s = c;
		if (!c)
			break;
	}
	free(p);
	return rc;
}

struct dbgcache *dbgcache_open(const char *dir, uint64_t max_bytes, char *err, size_t errlen)
{
	struct dbgcache *c;
	struct stat st;

	if (!dir[0] || make_dirs(dir) < 0 || stat(dir, &st) < 0) {
		snprintf(err, errlen, "debug cache '%s': %s", dir, strerror(errno ? errno : EINVAL));
		return NULL;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "debug cache '%s': not a directory", dir);
		return NULL;
	}
	if (!(c = calloc(1, sizeof(*c))) || !(c->dir = strdup(dir))) {
		free(c);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	c->max_bytes = max_bytes;
	return c;
}

void dbgcache_free(struct dbgcache *c)
{
	if (c)
		free(c->dir);
	free(c);
}

const struct dbgcache_stats *dbgcache_stats(const struct dbgcache *c)
{
	return &c->st;
}

static int file_of(const struct dbgcache *c, const uint8_t *id, size_t len, const char *suffix,
		   char *path, size_t size)
{
	char hex[2 * SYM_BUILD_ID_MAX + 1];

	if (len < 2 || len > SYM_BUILD_ID_MAX)
		return -1;
	build_id_hex(id, len, hex);
	return (size_t)snprintf(path, size, "%s/%s%s", c->dir, hex, suffix) < size ? 0 : -1;
}

static int name_of(const struct dbgcache *c, const uint8_t *id, size_t len, char *path,
		   size_t size)
{
	return file_of(c, id, len, SUFFIX, path, size);
}

/* Every section's contents lie inside the file: a copy cut short (a crash before its pages
 * reached the disk) is a miss, not DWARF missing for good. */
static int whole(Elf *e, off_t size)
{
	Elf_Scn *s = NULL;
	GElf_Shdr sh;

	while ((s = elf_nextscn(e, s))) {
		if (!gelf_getshdr(s, &sh))
			return 0;
		if (sh.sh_type != SHT_NOBITS &&
		    (sh.sh_offset > (uint64_t)size || sh.sh_size > (uint64_t)size - sh.sh_offset))
			return 0;
	}
	return 1;
}

int dbgcache_lookup(struct dbgcache *c, const uint8_t *id, size_t len, struct elffile *out)
{
	char path[4096];
	uint8_t got[SYM_BUILD_ID_MAX];
	struct stat st;

	if (!c || name_of(c, id, len, path, sizeof(path)) < 0)
		return -1;
	if (elffile_open(out, path) == 0) {
		if (fstat(out->fd, &st) == 0 && S_ISREG(st.st_mode) &&
		    symelf_build_id(out->elf, got) == len && memcmp(got, id, len) == 0 &&
		    whole(out->elf, st.st_size)) {
			(void)futimens(out->fd, NULL);	/* recently used: evicted last */
			c->st.hits++;
			return 0;
		}
		elffile_close(out);
	}
	c->st.misses++;
	return -1;
}

/* Copies section s of e (as the symbolizer left it in memory) as the same-numbered section
 * of o at *off; a section without contents, or hidden as SHT_NOBITS, is SHT_NOBITS. */
static int copy_section(Elf *o, Elf_Scn *s, uint64_t *off)
{
	GElf_Shdr sh;
	Elf_Scn *t = elf_newscn(o);
	Elf_Data *d = NULL, *nd;

	if (!gelf_getshdr(s, &sh) || !t || elf_ndxscn(t) != elf_ndxscn(s))
		return -1;
	if (sh.sh_type != SHT_NOBITS && sh.sh_type != SHT_NULL && sh.sh_size)
		d = elf_getdata(s, NULL);
	if (!d || !d->d_buf || elf_getdata(s, d)) {	/* one data block, as read */
		sh.sh_type = sh.sh_type == SHT_NULL ? SHT_NULL : SHT_NOBITS;
		sh.sh_flags &= ~(GElf_Xword)SHF_COMPRESSED;
		sh.sh_offset = *off;
	} else {
		if (!(nd = elf_newdata(t)))
			return -1;
		nd->d_buf = d->d_buf;
		nd->d_size = d->d_size;
		nd->d_type = d->d_type;
		nd->d_version = d->d_version;
		nd->d_align = 1;
		/* A debug section's alignment matters to no reader; a hostile one (2^40) must
		 * not make the copy a terabyte of padding. */
		if (sh.sh_addralign > 64 || (sh.sh_addralign & (sh.sh_addralign - 1)))
			sh.sh_addralign = 8;
		*off = elfcopy_align(*off, sh.sh_addralign);
		sh.sh_offset = *off;
		sh.sh_size = d->d_size;	/* file and memory sizes agree for every ELF type */
		*off += sh.sh_size;
	}
	return gelf_update_shdr(t, &sh) ? 0 : -1;
}

/* Writes the copy of e into fd: the headers, then the contents in section order. */
static int write_copy(Elf *e, int fd)
{
	GElf_Ehdr eh;
	size_t nscn = 0;
	uint64_t off;
	Elf *o = NULL;
	int rc = -1;

	if (elf_getshdrnum(e, &nscn) == 0 && elfcopy_start(e, fd, &o, &eh, &off) == 0) {
		rc = 0;
		for (Elf_Scn *s = NULL; rc == 0 && (s = elf_nextscn(e, s));)
			rc = copy_section(o, s, &off);
		if (rc == 0)
			rc = elfcopy_finish(o, &eh, off, nscn);
	}
	if (o)
		elf_end(o);
	return rc;
}

struct entry {
	char *name;
	uint64_t bytes;
	struct timespec used;
};

static int older(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->used.tv_sec != y->used.tv_sec)
		return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
	return (x->used.tv_nsec > y->used.tv_nsec) - (x->used.tv_nsec < y->used.tv_nsec);
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n > k && strcmp(s + n - k, suffix) == 0;
}

/* "<hex>.index" for the copy "<hex>.debug": 0, or -1 when it does not fit. */
static int index_name(const char *copy, char *out, size_t size)
{
	size_t k = strlen(copy) - strlen(SUFFIX);

	return (size_t)snprintf(out, size, "%.*s" INDEX_SUFFIX, (int)k, copy) < size ? 0 : -1;
}

/* Removes copies (each with its index), least recently used first, while the directory
 * holds more than its limit (keep: the one just written, removed last); and temporary files
 * a dead run left. */
static void evict(struct dbgcache *c, const char *keep)
{
	DIR *d = opendir(c->dir);
	struct entry *v = NULL;
	size_t n = 0, cap = 0;
	uint64_t total = 0;
	struct dirent *de;
	struct stat st;
	time_t now = time(NULL);

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		if (de->d_name[0] == '.' && ends_with(de->d_name, ".tmp")) {
			if (now - st.st_mtime > STALE_TMP_SECONDS)
				(void)unlinkat(dirfd(d), de->d_name, 0);
			continue;
		}
		if (!ends_with(de->d_name, SUFFIX))
			continue;
		if (n == cap) {
			struct entry *w = realloc(v, (cap ? 2 * cap : 16) * sizeof(*v));
			if (!w)
				break;
			v = w;
			cap = cap ? 2 * cap : 16;
		}
		if (!(v[n].name = strdup(de->d_name)))
			break;
		v[n].bytes = (uint64_t)st.st_blocks * 512;
		char ix[256];
		struct stat ist;
		if (index_name(de->d_name, ix, sizeof(ix)) == 0 &&
		    fstatat(dirfd(d), ix, &ist, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(ist.st_mode))
			v[n].bytes += (uint64_t)ist.st_blocks * 512;
		v[n].used = strcmp(de->d_name, keep) == 0 ? (struct timespec){ now + 1, 0 } :
							    st.st_mtim;
		total += v[n++].bytes;
	}
	qsort(v, n, sizeof(*v), older);
	for (size_t i = 0; i < n && total > c->max_bytes; i++) {
		if (unlinkat(dirfd(d), v[i].name, 0) == 0) {
			total -= v[i].bytes;
			c->st.evicted++;
			char ix[256];
			if (index_name(v[i].name, ix, sizeof(ix)) == 0)
				(void)unlinkat(dirfd(d), ix, 0);
		}
	}
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
	closedir(d);
}

/* What the copy will take: its sections with contents. */
static uint64_t copy_bytes(Elf *e)
{
	Elf_Scn *s = NULL;
	GElf_Shdr sh;
	uint64_t n = 0;

	while ((s = elf_nextscn(e, s)))
		if (gelf_getshdr(s, &sh) && sh.sh_type != SHT_NOBITS)
			n += sh.sh_size;
	return n;
}

/* Writes path through a temporary file of the directory (write(fd, arg)), renamed when
 * whole: concurrent runs see whole files only.  The file's size, or 0 when it was not
 * written (counted as failed). */
static uint64_t publish(struct dbgcache *c, const char *path, int (*write)(int fd, void *arg),
			void *arg)
{
	char tmp[4096 + 16];
	struct stat st;
	int fd, rc;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX.tmp", c->dir,
			     strrchr(path, '/') + 1) >= sizeof(tmp) ||
	    (fd = mkstemps(tmp, 4)) < 0) {
		c->st.failed++;
		return 0;
	}
	rc = write(fd, arg);
	if (rc == 0 && fstat(fd, &st) < 0)
		rc = -1;
	if (close(fd) < 0 || rc < 0 || rename(tmp, path) < 0) {
		unlink(tmp);
		c->st.failed++;
		return 0;
	}
	return (uint64_t)st.st_size;
}

static int write_elf(int fd, void *e)
{
	return write_copy(e, fd);
}

uint64_t dbgcache_store(struct dbgcache *c, const uint8_t *id, size_t len, Elf *e)
{
	char path[4096];
	uint64_t size;

	if (!c || name_of(c, id, len, path, sizeof(path)) < 0)
		return 0;
	if (copy_bytes(e) > c->max_bytes)
		return 0;	/* it would push everything else out, and not fit itself */
	if (!(size = publish(c, path, write_elf, e)))
		return 0;
	c->st.stored++;
	evict(c, strrchr(path, '/') + 1);
	return size;
}

int dbgcache_index_load(struct dbgcache *c, const uint8_t *id, size_t len, uint64_t copy_size,
			struct dbgindex *ix)
{
	char path[4096];

	if (!c || file_of(c, id, len, INDEX_SUFFIX, path, sizeof(path)) < 0)
		return -1;
	return dbgindex_read(path, copy_size, ix);
}

struct bytes {
	const uint8_t *p;
	size_t n;
};

static int write_bytes(int fd, void *arg)
{
	const struct bytes *b = arg;

	return fs_write_all(fd, b->p, b->n);
}

void dbgcache_index_store(struct dbgcache *c, const uint8_t *id, size_t len,
			  const struct dbgindex *ix)
{
	char path[4096];
	struct bytes b = { NULL, 0 };

	if (!c || file_of(c, id, len, INDEX_SUFFIX, path, sizeof(path)) < 0)
		return;
	uint8_t *p = dbgindex_encode(ix, &b.n);
	if (!(b.p = p)) {
		c->st.failed++;
		return;
	}
	(void)publish(c, path, write_bytes, &b);
	free(p);
}
