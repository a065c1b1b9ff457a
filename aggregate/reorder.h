/*
 * The bounded reorder buffer: stack events wait here until their time is safe to release,
 * so that windows are cut from event time even though each CPU's ring arrives separately.
 * Events are kept as copies of their frame payloads in a binary min-heap on time.
 */
#ifndef RP_REORDER_H
#define RP_REORDER_H

#include <stddef.h>
#include <stdint.h>

struct pending {
	uint64_t time;
	uint32_t len;
	uint8_t data[]; /* the FR_STACK payload */
};

struct reorder {
	struct pending **heap;
	size_t n, cap, max; /* max: --max-pending-events */
	size_t peak;
};

int reorder_init(struct reorder *r, size_t max);
/* Copies the payload in; -1 when out of memory. */
int reorder_push(struct reorder *r, uint64_t time, const uint8_t *data, uint32_t len);
/* The oldest event, or NULL when empty. */
const struct pending *reorder_peek(const struct reorder *r);
/* Removes the oldest event; the caller frees it. */
struct pending *reorder_pop(struct reorder *r);
void reorder_release(struct reorder *r);

#endif
