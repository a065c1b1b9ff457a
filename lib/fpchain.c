#include "fpchain.h"

int
fpchain_cyclic(const uint64_t *ips, unsigned n)
{
	if (n < FPCHAIN_CYCLE_REPEATS)
		return 0;
	for (unsigned p = 1; p <= FPCHAIN_CYCLE_PERIOD; p++) {
		unsigned same = 0;
		for (unsigned i = n - 1; i >= p && ips[i] == ips[i - p] &&
		     same < FPCHAIN_CYCLE_REPEATS; i--)
			same++;
		if (same >= FPCHAIN_CYCLE_REPEATS)
			return 1;
	}
	return 0;
}
