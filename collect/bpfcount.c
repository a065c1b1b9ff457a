#include "bpfcount.h"

#include <bpf/bpf.h>
#include <stdlib.h>

#include "grow.h"

void
bpfcount_put(int fd, int ncpu, const uint32_t *kinds, uint32_t n, uint64_t *counted,
	     struct emit *out, uint64_t now)
{
	static uint64_t *vals;  /* one value per CPU, as the kernel copies them out */
	static size_t cap;

	if (ncpu <= 0 || grow_array((void **)&vals, &cap, 0, (size_t)ncpu, sizeof(*vals)) < 0)
		return; /* out of memory: the counts wait for the next call */
	for (uint32_t c = 0; c < n; c++) {
		if (!kinds[c] || bpf_map_lookup_elem(fd, &c, vals) < 0)
			continue;
		uint64_t sum = 0;
		for (int i = 0; i < ncpu; i++)
			sum += vals[i];
		if (sum > counted[c]) {
			struct fr_lost l = { now, sum - counted[c], kinds[c] };
			emit_lost(out, &l);
			counted[c] = sum;
		}
	}
}
