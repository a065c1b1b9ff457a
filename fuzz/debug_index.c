/* libFuzzer target: a cached debug file's index (unwind/dbgindex.h) read from arbitrary
 * bytes, as a damaged or hostile debug cache holds it.  Input: u64 the copy's size, then the
 * file.  What is accepted encodes back to the same bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/le.h"
#include "../unwind/dbgindex.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dbgindex ix;

	if (size < 8)
		return 0;
	uint64_t copy = ld64(data);
	data += 8, size -= 8;
	if (dbgindex_parse(data, size, copy, &ix) < 0)
		return 0;
	size_t n = 0;
	uint8_t *again = dbgindex_encode(&ix, &n);
	if (!again || n != size || memcmp(again, data, size) != 0)
		abort();
	free(again);
	dbgindex_free(&ix);
	return 0;
}
