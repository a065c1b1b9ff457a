/* runsort: a stable merge of ascending runs (see runsort.h). */
#include "runsort.h"

#include <stdlib.h>
#include <string.h>

typedef int (*less_fn)(const void *, const void *);

static int by_less(const void *a, const void *b, void *arg)
{
	less_fn lt = *(const less_fn *)arg;

	return lt(a, b) ? -1 : lt(b, a);
}

/* Merges the sorted runs [a, m) and [m, e) of from into to (elements of size sz). */
static void merge_runs(const char *from, char *to, size_t sz, size_t a, size_t m, size_t e,
		       int (*less)(const void *, const void *))
{
	size_t i = a, j = m, k = a;

	while (i < m && j < e) {
		const char *src = less(from + j * sz, from + i * sz) ? from + j++ * sz :
								       from + i++ * sz;
		memcpy(to + k++ * sz, src, sz);
	}
	memcpy(to + k * sz, from + i * sz, (m - i) * sz);
	k += m - i;
	memcpy(to + k * sz, from + j * sz, (e - j) * sz);
}

void run_sort(void *base, size_t n, size_t sz, int (*less)(const void *, const void *))
{
	size_t *cut, ncut = 0, cap = 64;
	char *v = base, *tmp;

	if (!(cut = malloc(cap * sizeof(*cut))))
		goto general;
	cut[ncut++] = 0;
	for (size_t i = 1; i < n; i++) {
		if (!less(v + i * sz, v + (i - 1) * sz))
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
	if (!(tmp = malloc(n * sz)))
		goto general;
	char *from = v, *to = tmp;
	while (ncut > 1) {	/* merge runs pairwise until one is left */
		size_t k = 0;
		for (size_t r = 0; r < ncut; r += 2) {
			size_t e = r + 2 <= ncut ? cut[r + 2] : cut[r + 1];
			if (r + 1 < ncut)
				merge_runs(from, to, sz, cut[r], cut[r + 1], e, less);
			else
				memcpy(to + cut[r] * sz, from + cut[r] * sz, (e - cut[r]) * sz);
			cut[k++] = cut[r];
		}
		cut[k] = n;
		ncut = k;
		char *t = from;
		from = to;
		to = t;
	}
	if (from != v)
		memcpy(v, from, n * sz);
	free(tmp);
	free(cut);
	return;
general:
	free(cut);
	qsort_r(base, n, sz, by_less, &less);
}

