/*
 * runsort: a stable sort for arrays that are mostly sorted already.  A module's tables come
 * that way: each FDE's CFI rows are in address order and a linker writes the FDEs, and the
 * symbols of each object file, mostly in the order of the code.  The array is cut into its
 * ascending runs, which are merged pairwise: a few hundred runs of a hundred thousand rows
 * cost a fraction of qsort's comparisons.  Stable, as glibc's qsort (a merge sort) is, so
 * equal elements keep their order and the result is the one qsort gives.  Out of memory it
 * falls back to qsort_r.
 */
#ifndef RP_RUNSORT_H
#define RP_RUNSORT_H

#include <stddef.h>

/* Sorts n elements of size sz at base; less(a, b) is 1 when a goes before b. */
void run_sort(void *base, size_t n, size_t sz, int (*less)(const void *, const void *));

#endif
