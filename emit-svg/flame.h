/*
 * The call tree a flame graph draws: one node per distinct path of frame labels from the
 * bottom "all" node, with the value (CPU nanoseconds, or a folded line's count) of every
 * stack through it.  Children are found by (parent, interned label) in a hash map.
 *
 * The tree is capped at FLAME_MAX_NODES nodes, which bounds both memory and the SVG: a
 * stack that needs a node past the cap adds its value to the nodes it already has and
 * leaves the rest as the "truncated" value of the deepest one, so every drawn width and
 * share stays exact and only the detail below it is missing.
 */
#ifndef ES_FLAME_H
#define ES_FLAME_H

#include <stddef.h>
#include <stdint.h>

#include "idmap.h"
#include "winmodel.h"

#define FLAME_MAX_NODES 100000  /* the manual's rendering cap, in frames */

struct flame_name {
	size_t off;             /* in flame.pool, NUL-terminated */
	uint32_t len;
	uint8_t kind;           /* enum wframe_kind */
};

struct flame_node {
	uint32_t name;          /* index in flame.names; node 0 ("all") has none */
	uint32_t parent;
	uint32_t first;         /* after flame_sort: first child in flame.order */
	uint32_t nchild;
	uint64_t value;         /* every stack through this node */
	uint64_t trunc;         /* part of value whose deeper frames fell past the cap */
};

struct flame {
	uint32_t max_nodes;
	char *pool;
	size_t npool, cap_pool;
	struct flame_name *names;
	size_t nnames, cap_names;
	uint32_t *name_slots;   /* open addressing over names: index + 1, 0 = empty */
	size_t name_mask;
	struct flame_node *nodes;
	size_t nnodes, cap_nodes;
	struct idmap child_ix;  /* parent << 32 | name -> node */
	uint32_t *order;        /* after flame_sort: node ids grouped by parent, by name */
	uint64_t nstacks, trunc_stacks, trunc_value, samples;
	char err[200];
};

/* An empty tree holding the "all" node; 0, or -1 when out of memory. */
int flame_init(struct flame *t, uint32_t max_nodes);
void flame_release(struct flame *t);
/* Adds a stack of n labels, bottom first, with its value.  0, or -1 with t->err when out
 * of memory. */
int flame_add(struct flame *t, const struct wframe *fr, size_t n, uint64_t value);
/* Orders every node's children by name, bytewise, for drawing.  0 or -1 with t->err. */
int flame_sort(struct flame *t);

static inline const char *
flame_str(const struct flame *t, uint32_t name)
{
	return t->pool + t->names[name].off;
}

#endif
