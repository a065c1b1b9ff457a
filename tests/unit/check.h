/* The unit tests' one assertion: counts passes and failures, and names a failure on stderr
 * with its place.  Each test program includes it once (one translation unit). */
#ifndef RP_TEST_CHECK_H
#define RP_TEST_CHECK_H

#include <stdio.h>

static int passed, failed;

#define CHECK(c)                                                                  \
	do {                                                                      \
		if (c) {                                                          \
			passed++;                                                 \
		} else {                                                          \
			failed++;                                                 \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,    \
				__LINE__, #c);                                    \
		}                                                                 \
	} while (0)

#endif
