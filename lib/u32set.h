/*
 * A sorted set of 32-bit ids (pids) in one array: a binary search finds an id or the place
 * it goes.  For the small sets collect keeps of processes (launch's known processes, the ones
 * whose leader exited first), where a lookup per record must stay cheap.
 */
#ifndef RP_U32SET_H
#define RP_U32SET_H

#include <stddef.h>
#include <stdint.h>

struct u32set {
	uint32_t *v;            /* ascending, no repeats */
	size_t n, cap;
};

/* The index of id, or where it would go; *found says which. */
size_t u32set_find(const struct u32set *s, uint32_t id, int *found);
int u32set_has(const struct u32set *s, uint32_t id);
/* Adds id unless it is there.  0, or -1 when out of memory. */
int u32set_add(struct u32set *s, uint32_t id);
/* Removes the id at index i (from u32set_find). */
void u32set_remove_at(struct u32set *s, size_t i);
/* Removes id if it is there. */
void u32set_remove(struct u32set *s, uint32_t id);
void u32set_free(struct u32set *s);

#endif
