/*
 * The bounded reorder buffer: stack events wait here until their time is safe to release,
 * so that windows are cut from event time even though each CPU's ring arrives separately.
 * Events are kept decoded, as aggregate counts them, beside a copy of their frame's payload
 * that goes on unchanged: a stack is decoded once, on arrival.  Most arrive in time order,
 * so an event at or after the newest one queued in order joins a FIFO (constant time); only
 * an event older than that goes to a binary min-heap.  Release takes the older of the two
 * heads, ties in arrival order.
 */
#ifndef RP_REORDER_H
#define RP_REORDER_H

#include <stddef.h>
#include <stdint.h>

/* One stack sample as the windows count it (an FR_STACK decoded). */
struct stack_event {
	uint64_t time, period;
	uint32_t pid, tid, flags;
	uint16_t nlocs;
	const uint32_t *locs; /* leaf first */
	/* The frame it came in: 0 for FR_STACK; a heap frame (FR_HEAP_STACK, FR_HEAP_FREE,
	 * FR_HEAP_RESET) waits here too, its payload decoded once it is released. */
	uint32_t type;
};

struct pending {
	struct stack_event ev; /* ev.locs points at locs */
	uint32_t len;          /* bytes of the FR_STACK payload, after the locations */
	uint32_t cap;          /* bytes allocated for locs and the payload */
	uint32_t locs[];       /* ev.nlocs ids, then the payload */
};

/* The frame payload an event arrived in. */
static inline const uint8_t *
pending_payload(const struct pending *p)
{
	return (const uint8_t *)(p->locs + p->ev.nlocs);
}

/* Released events are kept for reuse by size class (REORDER_GRAIN bytes each), so a steady
 * stream allocates nothing: at most the peak of pending events is ever held. */
#define REORDER_GRAIN 64
/* Up to 33 grains: the largest stack, 256 ids beside its 34 + 4 x 256 byte payload. */
#define REORDER_CLASSES 34

/* A queued event with its sort key beside the pointer: comparisons touch no payload. */
struct reorder_slot {
	uint64_t time, seq;
	struct pending *p;
};

struct reorder {
	struct reorder_slot *fifo; /* ring of fcap (a power of two) slots, head at fhead */
	size_t fhead, fn, fcap;
	struct reorder_slot *heap; /* the events that arrived out of order */
	size_t hn, hcap;
	uint64_t seq;
	size_t n, max; /* n: events held in both; max: --max-pending-events (0: no bound) */
	size_t peak;
	struct pending *spare[REORDER_CLASSES]; /* chained through their data */
};

int reorder_init(struct reorder *r, size_t max);
/* Copies the event (its locations too) and its frame's payload in; -1 when out of memory.
 * When max events are held already, the oldest of them and the new one is handed back in
 * *evicted instead of being held (the caller releases it, forced, and frees it), so n and
 * peak never exceed max; otherwise *evicted is NULL. */
int reorder_push(struct reorder *r, const struct stack_event *ev, const uint8_t *payload,
		 uint32_t len, struct pending **evicted);
/* The oldest event, or NULL when empty. */
const struct pending *reorder_peek(const struct reorder *r);
/* Removes the oldest event; the caller hands it back with reorder_free. */
struct pending *reorder_pop(struct reorder *r);
void reorder_free(struct reorder *r, struct pending *p);
void reorder_release(struct reorder *r);

#endif
