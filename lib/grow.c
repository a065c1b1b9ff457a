#include "grow.h"

#include <stdint.h>
#include <stdlib.h>

int
grow_array(void **arr, size_t *cap, size_t n, size_t more, size_t elem)
{
	size_t c = *cap ? *cap : 64;
	void *p;

	if (more > SIZE_MAX - n)
		return -1;
	while (c < n + more) {
		if (c > SIZE_MAX / 2 / elem)
			return -1;
		c *= 2;
	}
	if (c == *cap)
		return 0;
	if (!(p = realloc(*arr, c * elem)))
		return -1;
	*arr = p;
	*cap = c;
	return 0;
}
