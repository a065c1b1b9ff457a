/*
 * Frame-pointer chains as the kernel records them.  A frame whose saved frame pointer leads
 * back to itself (or to a frame a few steps up) makes the kernel repeat the same short run of
 * return addresses until its depth limit; recursion that deep looks the same.
 */
#ifndef RP_FPCHAIN_H
#define RP_FPCHAIN_H

#include <stdint.h>

#define FPCHAIN_CYCLE_PERIOD 4  /* longest repeating run that counts as a cycle */
#define FPCHAIN_CYCLE_REPEATS 16 /* addresses that must repeat at the chain's end */

/* 1 when the last addresses of the chain repeat a period of at most four. */
int fpchain_cyclic(const uint64_t *ips, unsigned n);

#endif
