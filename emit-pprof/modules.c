/* FR_MODULES of one window (see modules.h). */
#include "modules.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"

static int
hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static int
cmp_bid(const void *a, const void *b)
{
	const struct fr_bid *x = a, *y = b;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return memcmp(x->id, y->id, x->len);
}

int
modules_announce(struct stream_writer *out, uint32_t index, const struct profile *const *p,
		 int n)
{
	static struct fr_bid *ids;
	static size_t cap;
	size_t nids = 0;

	for (int k = 0; k < n; k++) {
		const struct defs *d = p[k]->defs;
		for (size_t i = 0; i < p[k]->nmaps; i++) {
			const struct def_mapping *m = defs_mapping(d, p[k]->maps[i]);
			if (!m || m->build_id.len < 4)
				continue;
			if (grow_array((void **)&ids, &cap, nids, 1, sizeof(*ids)) < 0)
				return -1;
			const char *h = defs_str(d, m->build_id);
			struct fr_bid *b = &ids[nids];
			memset(b, 0, sizeof(*b));
			b->len = (uint8_t)(m->build_id.len / 2);
			for (uint8_t j = 0; j < b->len; j++)
				b->id[j] = (uint8_t)(hexval(h[2 * j]) << 4 | hexval(h[2 * j + 1]));
			nids++;
		}
	}
	if (nids) /* qsort wants an array even for none */
		qsort(ids, nids, sizeof(*ids), cmp_bid);
	size_t u = 0;
	for (size_t i = 0; i < nids; i++)
		if (u == 0 || cmp_bid(&ids[u - 1], &ids[i]) != 0)
			ids[u++] = ids[i];
	/* Every window gets one, an empty list too: the window needs no module. */
	size_t at = 0;
	do {
		size_t k = u - at > STREAM_MAX_MODULES ? STREAM_MAX_MODULES : u - at;
		/* No pointer arithmetic on the NULL of an empty list. */
		if (stream_put_modules(out, index, k ? ids + at : NULL, (uint16_t)k) < 0)
			return -1;
		at += k;
	} while (at < u);
	return 0;
}
