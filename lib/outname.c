#include "outname.h"

#include <inttypes.h>
#include <stdio.h>

void
outname_session(char buf[17], uint64_t session_id)
{
	snprintf(buf, 17, "%016" PRIx64, session_id);
}

int
outname_format(char *buf, size_t len, const char *kind, uint64_t session_id,
	       uint32_t window_index, int64_t start_unix_nanos, const char *ext)
{
	int n = snprintf(buf, len, "%s-%016" PRIx64 "-%06" PRIu32 "-%" PRId64 ".%s", kind,
			 session_id, window_index, start_unix_nanos, ext);
	return n < 0 || (size_t)n >= len ? -1 : n;
}
