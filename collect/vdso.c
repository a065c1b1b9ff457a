/*
 * The vDSO's image in the module cache, keyed by its build id as perf's build-id cache keeps
 * it: read from the target's mapping through /proc/PID/mem, or, when the process is gone
 * already (its mmap record is read after its exit), collect's own, which is the same image
 * for every process of the same ABI (taken when the sizes agree).  The image is read once
 * per process that maps one, compared with the last one, and filed once per build id
 * (docs/module-cache.md).
 */
#include <elf.h>
#include <err.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "elfid.h"
#include "vdso.h"

#define VDSO_MAX (1u << 20)     /* a larger "[vdso]" is not one */

static struct {
	uint8_t *image;         /* the last image read, NULL before */
	size_t size;
	uint8_t bid[STREAM_BUILD_ID_MAX], bid_len;
} last;

int
vdso_mapping(const struct fr_mmap *m)
{
	return m->path.len == 6 && memcmp(m->path.p, "[vdso]", 6) == 0;
}

/* The size of collect's own vDSO mapping (its ELF file, to the page), or 0. */
static size_t
own_size(const Elf64_Ehdr **base)
{
	const Elf64_Ehdr *e = (const Elf64_Ehdr *)getauxval(AT_SYSINFO_EHDR);
	if (!e || memcmp(e->e_ident, ELFMAG, SELFMAG) != 0 || e->e_ident[EI_CLASS] != ELFCLASS64)
		return 0;
	uint64_t end = e->e_shoff + (uint64_t)e->e_shnum * e->e_shentsize;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)((const uint8_t *)e + e->e_phoff);
	for (unsigned i = 0; i < e->e_phnum; i++)
		if (ph[i].p_offset + ph[i].p_filesz > end)
			end = ph[i].p_offset + ph[i].p_filesz;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	*base = e;
	return (size_t)((end + page - 1) / page * page);
}

/* The image of pid's vDSO mapped at start, size bytes, into buf: 0, or -1. */
static int
read_image(pid_t pid, uint64_t start, size_t size, uint8_t *buf)
{
	char path[40];
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t got = fd >= 0 ? pread(fd, buf, size, (off_t)start) : -1;
	if (fd >= 0)
		close(fd);
	if (got != (ssize_t)size) {
		const Elf64_Ehdr *own = NULL;
		if (own_size(&own) != size)
			return -1;
		memcpy(buf, own, size);
	}
	return memcmp(buf, ELFMAG, SELFMAG) == 0 ? 0 : -1;
}

/* The image in a memory file, for the build id and the cache: its fd, or -1. */
static int
image_file(const uint8_t *buf, size_t size)
{
	int fd = memfd_create("vdso", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	if (write(fd, buf, size) != (ssize_t)size) {
		close(fd);
		return -1;
	}
	return fd;
}

void
vdso_file(struct modcache *cache, struct fr_mmap *m, uint64_t end)
{
	size_t size = (size_t)(end - m->start);
	if (end <= m->start || size > VDSO_MAX)
		return;
	uint8_t *buf = malloc(size);
	if (!buf)
		errx(1, "out of memory");
	if (read_image((pid_t)m->pid, m->start, size, buf) < 0) {
		free(buf);
		return;
	}
	if (!last.image || last.size != size || memcmp(last.image, buf, size) != 0) {
		int fd = image_file(buf, size);
		int n = fd >= 0 ? elfid_build_id(fd, last.bid, sizeof(last.bid)) : 0;
		char why[PATH_MAX + 200];
		if (n > 0 && modcache_add_fd(cache, last.bid, (size_t)n, fd, why, sizeof(why)) < 0)
			warnx("module cache: the vDSO: %s", why);
		if (fd >= 0)
			close(fd);
		free(last.image);
		last.image = buf;
		last.size = size;
		last.bid_len = n > 0 ? (uint8_t)n : 0;
	} else {
		free(buf);
	}
	m->build_id_len = last.bid_len;
	memcpy(m->build_id, last.bid, last.bid_len);
}
