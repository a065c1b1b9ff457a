/* breakpad: build id to breakpad id (see breakpad.h). */
#include "breakpad.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

void
breakpad_id(const char *hex, char out[34])
{
	static const char digits[] = "0123456789ABCDEF";
	uint8_t b[16] = { 0 };
	size_t n = strlen(hex) / 2, i;
	/* GUID byte order: the first three fields are little-endian on the target. */
	static const uint8_t order[16] = { 3, 2, 1, 0, 5, 4, 7, 6,
					   8, 9, 10, 11, 12, 13, 14, 15 };

	out[0] = 0;
	if (!n)
		return;
	for (i = 0; i < n && i < 16; i++) {
		unsigned v;
		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return;
		b[i] = (uint8_t)v;
	}
	for (i = 0; i < 16; i++) {
		out[2 * i] = digits[b[order[i]] >> 4];
		out[2 * i + 1] = digits[b[order[i]] & 15];
	}
	out[32] = '0';  /* age */
	out[33] = 0;
}
