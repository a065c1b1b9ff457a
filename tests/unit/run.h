/* The unit tests' shell command: a printf-style line run by system(), for the tests that
 * compile their fixtures at run time.  Each test program includes it once. */
#ifndef RP_TEST_RUN_H
#define RP_TEST_RUN_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* Runs a shell command; returns its exit status as system() does. */
static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

#endif
