/* /proc/kallsyms reader and address lookup. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksyms.h"

static int
ksyms_push(struct ksyms *k, uint64_t addr, const char *name, const char *mod)
{
	if (k->n == k->cap) {
		size_t cap = k->cap ? k->cap * 2 : 4096;
		struct ksym *v = realloc(k->v, cap * sizeof(*v));
		if (!v)
			return -1;
		k->v = v;
		k->cap = cap;
	}
	size_t nl = strlen(name), ml = strlen(mod);
	char *s = malloc(nl + ml + 2);
	if (!s)
		return -1;
	memcpy(s, name, nl + 1);
	memcpy(s + nl + 1, mod, ml + 1);
	k->v[k->n++] = (struct ksym){ .start = addr, .name = s, .module = s + nl + 1 };
	return 0;
}

/* "ffffffff81000000 T _text" or "ffffffffc0a01000 t foo\t[mod]" */
static int
ksyms_line(struct ksyms *k, char *line)
{
	char *save = NULL;
	char *a = strtok_r(line, " \t\n", &save);
	char *t = strtok_r(NULL, " \t\n", &save);
	char *name = strtok_r(NULL, " \t\n", &save);
	char *mod = strtok_r(NULL, " \t\n", &save);
	if (!a || !t || !name || !strchr("tTwW", t[0]) || t[1])
		return 0;
	uint64_t addr = strtoull(a, NULL, 16);
	if (addr == 0)
		return 0;
	if (mod && mod[0] == '[') {
		mod++;
		mod[strcspn(mod, "]")] = 0;
	}
	return ksyms_push(k, addr, name, mod ? mod : "");
}

static int
ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* Sorts, keeps the first name of each address and sets each end to the next start (the
 * last symbol, having none, gets one page). */
static void
ksyms_finish(struct ksyms *k)
{
	if (k->n == 0)
		return;
	qsort(k->v, k->n, sizeof(*k->v), ksym_cmp);
	size_t j = 0;
	for (size_t i = 0; i < k->n; i++) {
		if (j > 0 && k->v[j - 1].start == k->v[i].start) {
			free(k->v[i].name);
			continue;
		}
		k->v[j++] = k->v[i];
	}
	k->n = j;
	for (size_t i = 0; i < k->n; i++)
		k->v[i].end = i + 1 < k->n ? k->v[i + 1].start : k->v[i].start + 4096;
}

int
ksyms_load(struct ksyms *k, const char *path)
{
	memset(k, 0, sizeof(*k));
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	/* kallsyms costs per read call, not per byte: the 1 KiB reads stdio picks for /proc
	 * took 0.3 s.  glibc ignores the size unless it is given the buffer. */
	char *iobuf = malloc(1 << 18);
	if (iobuf)
		setvbuf(f, iobuf, _IOFBF, 1 << 18);
	char *line = NULL;
	size_t cap = 0;
	int rc = 0;
	while (rc == 0 && getline(&line, &cap, f) > 0)
		rc = ksyms_line(k, line);
	free(line);
	fclose(f);
	free(iobuf);
	if (rc < 0) {
		ksyms_free(k);
		errno = ENOMEM;
		return -1;
	}
	ksyms_finish(k);
	return 0;
}

struct ksym *
ksyms_find(struct ksyms *k, uint64_t ip)
{
	size_t lo = 0, hi = k->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (k->v[mid].start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	struct ksym *s = &k->v[lo - 1];
	return ip < s->end ? s : NULL;
}

void
ksyms_free(struct ksyms *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->n; i++)
		free(k->v[i].name);
	free(k->v);
	memset(k, 0, sizeof(*k));
}
