/* libFuzzer target: the JSLB container check and decoder (lib/jslb.c) on arbitrary bytes.
 * The output cap keeps self-repeating slab references cheap. */
#include <stdint.h>
#include <stdio.h>

#include "jslb.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *out = fopen("/dev/null", "w");
	char err[200];

	if (!out)
		return 0;
	(void)jslb_decode(data, size, out, 1 << 20, err, sizeof(err));
	fclose(out);
	return 0;
}
