#include "flame.h"
#include "grow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int
oom(struct flame *t)
{
	snprintf(t->err, sizeof(t->err), "out of memory");
	return -1;
}

int
flame_init(struct flame *t, uint32_t max_nodes)
{
	memset(t, 0, sizeof(*t));
	t->max_nodes = max_nodes < 1 ? 1 : max_nodes;
	idmap_init(&t->child_ix);
	/* Twice the most names there can be, so probing stays short and never fills. */
	for (t->name_mask = 1024; t->name_mask < 2 * (size_t)t->max_nodes; t->name_mask *= 2)
		;
	t->name_slots = calloc(t->name_mask, sizeof(*t->name_slots));
	t->name_mask--;
	if (!t->name_slots || grow_array((void **)&t->nodes, &t->cap_nodes, 0, 1,
				   sizeof(*t->nodes)) < 0)
		return oom(t);
	t->nodes[0] = (struct flame_node){ 0 };
	t->nnodes = 1;
	return 0;
}

void
flame_release(struct flame *t)
{
	free(t->pool);
	free(t->names);
	free(t->name_slots);
	free(t->nodes);
	free(t->order);
	idmap_release(&t->child_ix);
	memset(t, 0, sizeof(*t));
}

static uint64_t
hash(const struct wframe *f)
{
	uint64_t h = 1469598103934665603ull ^ f->kind;
	uint32_t i;

	for (i = 0; i < f->len; i++)
		h = (h ^ (unsigned char)f->name[i]) * 1099511628211ull;
	return h;
}

/* The slot holding f's name, or the empty slot where it would go. */
static uint32_t *
name_slot(const struct flame *t, const struct wframe *f)
{
	size_t i = (size_t)hash(f) & t->name_mask;
	const struct flame_name *n;

	for (;; i = (i + 1) & t->name_mask) {
		uint32_t *s = &t->name_slots[i];

		if (!*s)
			return s;
		n = &t->names[*s - 1];
		if (n->len == f->len && n->kind == f->kind &&
		    memcmp(t->pool + n->off, f->name, f->len) == 0)
			return s;
	}
}

static int
intern(struct flame *t, const struct wframe *f, uint32_t *slot)
{
	if (grow_array((void **)&t->pool, &t->cap_pool, t->npool, f->len + 1, 1) < 0 ||
	    grow_array((void **)&t->names, &t->cap_names, t->nnames, 1, sizeof(*t->names)) < 0)
		return oom(t);
	memcpy(t->pool + t->npool, f->name, f->len);
	t->pool[t->npool + f->len] = 0;
	t->names[t->nnames] = (struct flame_name){ t->npool, f->len, f->kind };
	t->npool += f->len + 1;
	*slot = (uint32_t)++t->nnames;
	return 0;
}

/* The child of parent labelled f, created if the cap allows; 0 when it does not. */
static int
child(struct flame *t, uint32_t parent, const struct wframe *f, uint32_t *out)
{
	uint32_t *slot = name_slot(t, f), id;
	uint64_t key;

	if (*slot && idmap_get(&t->child_ix, (uint64_t)parent << 32 | (*slot - 1), out))
		return 1;
	if (t->nnodes >= t->max_nodes)
		return 0;
	if (!*slot && intern(t, f, slot) < 0)
		return -1;
	if (grow_array((void **)&t->nodes, &t->cap_nodes, t->nnodes, 1, sizeof(*t->nodes)) < 0)
		return oom(t);
	id = (uint32_t)t->nnodes++;
	t->nodes[id] = (struct flame_node){ .name = *slot - 1, .parent = parent };
	key = (uint64_t)parent << 32 | (*slot - 1);
	if (idmap_put(&t->child_ix, key, id) < 0)
		return oom(t);
	*out = id;
	return 1;
}

int
flame_add(struct flame *t, const struct wframe *fr, size_t n, uint64_t value)
{
	uint32_t node = 0, next;
	size_t i;
	int rc;

	t->nstacks++;
	t->nodes[0].value += value;
	for (i = 0; i < n; i++) {
		if ((rc = child(t, node, &fr[i], &next)) < 0)
			return -1;
		if (!rc) {
			t->nodes[node].trunc += value;
			t->trunc_stacks++;
			t->trunc_value += value;
			return 0;
		}
		node = next;
		t->nodes[node].value += value;
	}
	return 0;
}

static const struct flame *sort_tree;   /* qsort has no context argument */

static int
cmp_node(const void *a, const void *b)
{
	const struct flame_node *x = &sort_tree->nodes[*(const uint32_t *)a];
	const struct flame_node *y = &sort_tree->nodes[*(const uint32_t *)b];
	int c;

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	c = strcmp(flame_str(sort_tree, x->name), flame_str(sort_tree, y->name));
	if (c)
		return c;
	/* Same text, different kind (a kernel and a user function of one name). */
	return (sort_tree->names[x->name].kind > sort_tree->names[y->name].kind) -
	       (sort_tree->names[x->name].kind < sort_tree->names[y->name].kind);
}

int
flame_sort(struct flame *t)
{
	size_t i, n = t->nnodes - 1;

	free(t->order);
	if (!(t->order = malloc((n ? n : 1) * sizeof(*t->order))))
		return oom(t);
	for (i = 0; i < n; i++)
		t->order[i] = (uint32_t)(i + 1);
	sort_tree = t;
	if (n)
		qsort(t->order, n, sizeof(*t->order), cmp_node);
	for (i = 0; i < t->nnodes; i++)
		t->nodes[i].nchild = 0;
	for (i = n; i-- > 0;) {
		struct flame_node *p = &t->nodes[t->nodes[t->order[i]].parent];

		p->first = (uint32_t)i;
		p->nchild++;
	}
	return 0;
}
