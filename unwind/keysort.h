/*
 * keysort: a stable sort by a 64-bit key, for tables in no useful order.  A symbol table
 * lists each object file's local functions in address order but its global ones in the
 * order of their names' hash, so runsort finds thousands of short runs there.  keysort
 * sorts (key, position) pairs by radix, as many passes of 11 bits as the keys' spread
 * needs (two for a library's addresses), then orders elements with equal keys by the
 * caller's tie-break, stably: the result is the one a stable sort with the whole
 * comparison gives.
 */
#ifndef RP_KEYSORT_H
#define RP_KEYSORT_H

#include <stddef.h>

/* Sorts n elements of size sz at base by the uint64_t at byte offset koff of each, equal
 * keys by tie(a, b) (1 when a goes before b; NULL keeps their order).  0, or -1 when out of
 * memory (base unchanged). */
int key_sort(void *base, size_t n, size_t sz, size_t koff, int (*tie)(const void *, const void *));

#endif
