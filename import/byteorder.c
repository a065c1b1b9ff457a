#include "byteorder.h"

uint64_t
bo_flags(struct bo b, const uint8_t *p)
{
	uint64_t v = bo64(b, p), r = 0;
	if (!b.swap)
		return v;
	for (int i = 0; i < 64; i++)
		if (v & (1ull << i))
			r |= 1ull << (63 - i);
	return r;
}
