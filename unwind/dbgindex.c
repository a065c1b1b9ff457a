/* dbgindex: a cached debug file's unit index, read and written (see dbgindex.h). */
#include "dbgindex.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "le.h"

#define MAGIC "RPDBGIX2"
#define HEAD 48u
#define RANGE 24u
#define FUNC 24u
#define MAX_FILE (256u << 20)

static size_t
pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* The file's length for these counts (all bounded, so no overflow). */
static size_t
file_len(size_t nunits, size_t nranges, size_t nfuncs)
{
	return HEAD + 8 * nunits + pad8(nunits) + RANGE * nranges + FUNC * nfuncs;
}

int
dbgindex_parse(const uint8_t *p, size_t len, uint64_t copy_size, struct dbgindex *ix)
{
	memset(ix, 0, sizeof(*ix));
	if (len < HEAD || memcmp(p, MAGIC, 8) != 0 || ld64(p + 8) != copy_size)
		return -1;
	uint64_t ninfo = ld64(p + 16);
	uint32_t nu = ld32(p + 24), nr = ld32(p + 28), nf = ld32(p + 32);
	if (nu > DBGIX_MAX_UNITS || nr > DBGIX_MAX_RANGES || nf > DBGIX_MAX_FUNCS ||
	    len != file_len(nu, nr, nf))
		return -1;
	ix->copy_size = copy_size;
	ix->ninfo = ninfo;
	ix->nunits = nu;
	ix->nranges = nr;
	ix->nfuncs = nf;
	ix->strndx = ld32(p + 36);
	ix->strsize = ld64(p + 40);
	ix->dies = malloc((nu ? nu : 1) * sizeof(*ix->dies));
	ix->state = malloc(nu ? nu : 1);
	ix->ranges = malloc((nr ? nr : 1) * sizeof(*ix->ranges));
	ix->funcs = malloc((nf ? nf : 1) * sizeof(*ix->funcs));
	if (!ix->dies || !ix->state || !ix->ranges || !ix->funcs)
		goto bad;
	const uint8_t *d = p + HEAD, *s = d + 8 * (size_t)nu, *r = s + pad8(nu);
	for (size_t k = nu; k < pad8(nu); k++)
		if (s[k])
			goto bad; /* padding is zero: an index reads as one file only */
	for (size_t u = 0; u < nu; u++) {
		ix->dies[u] = ld64(d + 8 * u);
		ix->state[u] = s[u];
		/* units in .debug_info order, each inside it */
		if (ix->dies[u] >= ninfo || (u && ix->dies[u] <= ix->dies[u - 1]) ||
		    s[u] > DBGIX_EAGER)
			goto bad;
	}
	for (size_t i = 0; i < nr; i++, r += RANGE) {
		struct dbgix_range *x = &ix->ranges[i];
		*x = (struct dbgix_range){ ld64(r), ld64(r + 8), ld32(r + 16) };
		if (ld32(r + 20) || x->unit >= nu || x->lo >= x->hi ||
		    ix->state[x->unit] != DBGIX_LAZY ||
		    (i && (x->lo < x[-1].lo || (x->lo == x[-1].lo && x->unit < x[-1].unit))))
			goto bad;
	}
	for (size_t i = 0; i < nf; i++, r += FUNC) {
		struct dbgix_func *f = &ix->funcs[i];
		*f = (struct dbgix_func){ ld64(r), ld64(r + 8), ld32(r + 16) };
		/* one function an address, in order; each name inside the table */
		if (ld32(r + 20) || f->name >= ix->strsize || (i && f->lo <= f[-1].lo))
			goto bad;
	}
	return 0;
bad:
	dbgindex_free(ix);
	return -1;
}

int
dbgindex_read(const char *path, uint64_t copy_size, struct dbgindex *ix)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	memset(ix, 0, sizeof(*ix));
	if (fd < 0)
		return -1;
	uint8_t *buf = NULL;
	int rc = -1;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= HEAD &&
	    st.st_size <= MAX_FILE && (buf = malloc((size_t)st.st_size))) {
		size_t got = 0, want = (size_t)st.st_size;
		ssize_t n;
		while (got < want && (n = read(fd, buf + got, want - got)) > 0)
			got += (size_t)n;
		if (got == want)
			rc = dbgindex_parse(buf, want, copy_size, ix);
	}
	free(buf);
	close(fd);
	return rc;
}

uint8_t *
dbgindex_encode(const struct dbgindex *ix, size_t *len)
{
	if (ix->nunits > DBGIX_MAX_UNITS || ix->nranges > DBGIX_MAX_RANGES ||
	    ix->nfuncs > DBGIX_MAX_FUNCS)
		return NULL;
	size_t n = file_len(ix->nunits, ix->nranges, ix->nfuncs);
	if (n > MAX_FILE)
		return NULL;
	uint8_t *p = calloc(1, n);
	if (!p)
		return NULL;
	memcpy(p, MAGIC, 8);
	st64(p + 8, ix->copy_size);
	st64(p + 16, ix->ninfo);
	st32(p + 24, (uint32_t)ix->nunits);
	st32(p + 28, (uint32_t)ix->nranges);
	st32(p + 32, (uint32_t)ix->nfuncs);
	st32(p + 36, ix->strndx);
	st64(p + 40, ix->strsize);
	uint8_t *d = p + HEAD, *s = d + 8 * ix->nunits, *r = s + pad8(ix->nunits);
	for (size_t u = 0; u < ix->nunits; u++) {
		st64(d + 8 * u, ix->dies[u]);
		s[u] = ix->state[u];
	}
	for (size_t i = 0; i < ix->nranges; i++, r += RANGE) {
		st64(r, ix->ranges[i].lo);
		st64(r + 8, ix->ranges[i].hi);
		st32(r + 16, ix->ranges[i].unit);
	}
	for (size_t i = 0; i < ix->nfuncs; i++, r += FUNC) {
		st64(r, ix->funcs[i].lo);
		st64(r + 8, ix->funcs[i].hi);
		st32(r + 16, ix->funcs[i].name);
	}
	*len = n;
	return p;
}

void
dbgindex_free(struct dbgindex *ix)
{
	free(ix->dies);
	free(ix->state);
	free(ix->ranges);
	free(ix->funcs);
	memset(ix, 0, sizeof(*ix));
}
