/* The running kernel's version against a feature's floor. */
#ifndef COLLECT_KERNVER_H
#define COLLECT_KERNVER_H

#include <stddef.h>

/* 1 when the kernel is older than major.minor, its release then in release (size len);
 * 0 when it is not, or its version cannot be read (the feature's own probe then decides). */
int kernel_older_than(unsigned major, unsigned minor, char *release, size_t len);

#endif
