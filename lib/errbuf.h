/* errbuf: the one-line error a function hands back in a caller's buffer. */
#ifndef RP_ERRBUF_H
#define RP_ERRBUF_H

#include <stddef.h>

/* Formats the error into err (errlen bytes) and returns -1, so a failing path reads
 * `return errbuf_fail(err, errlen, "cannot …", …);`. */
int errbuf_fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
