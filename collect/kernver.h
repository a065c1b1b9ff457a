/* The running kernel's version against a feature's floor. */
#ifndef COLLECT_KERNVER_H
#define COLLECT_KERNVER_H

#include <stddef.h>

/* 1 when the kernel is older than major.minor, with "WHAT needs Linux MAJOR.MINOR or
 * newerWHY; this kernel is RELEASE" in why; 0 when it is not, or its version cannot be read
 * (the feature's own probe then decides).  why_extra follows "newer" ("" for none). */
int kernel_below(unsigned major, unsigned minor, const char *what, const char *why_extra,
		 char *why, size_t whylen);

#endif
