/* libFuzzer target: the option value parsers of lib/parse.c (durations, bounded integers)
 * on arbitrary text.  The input is the value; its first byte also picks the bounds, so that
 * ranges both tight and wide are tried.  A value that parses must be in its range. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t bounds[][2] = {
		{ 0, UINT64_MAX }, { 1, 1u << 24 }, { 1, 100 }, { 4096, 1u << 30 },
		{ 0, 3600000000ull }, { 1, 999 }, { 1, 1000000 }, { 1, 1000 },
	};
	char err[200];
	uint64_t v = 0;

	if (size > 4096)
		return 0;
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = 0;
	(void)parse_duration(s, &v, err, sizeof(err));
	const uint64_t *b = bounds[size ? data[0] % 8 : 0];
	if (parse_u64(s, b[0], b[1], &v, err, sizeof(err)) == 0 && (v < b[0] || v > b[1]))
		abort();
	free(s);
	return 0;
}
