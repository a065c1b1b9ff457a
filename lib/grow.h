/*
 * Growable arrays: one helper for every "append to a realloc'ed array" in the stages.
 */
#ifndef RP_GROW_H
#define RP_GROW_H

#include <stddef.h>

/* Makes *arr (of elem-byte items, *cap allocated) hold at least n + more items, doubling
 * from 64; *arr and *cap change only on success.  0, or -1 when out of memory or when the
 * size would overflow. */
int grow_array(void **arr, size_t *cap, size_t n, size_t more, size_t elem);

#endif
