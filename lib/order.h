/*
 * The order and repetition rules of docs/stream-format.md ("Order and repetition"),
 * checked on every frame a stage reads (stream_read calls stream_order_check).  The rules
 * every stream obeys are always on; the ones that depend on where a stage sits are asked
 * for with ORDER_* flags in stream_reader.rules, set after stream_reader_open.
 */
#ifndef RP_ORDER_H
#define RP_ORDER_H

#include <stdint.h>

#include "stackset.h"

struct frame;

/* A stage before the emitters (unwind, aggregate): no file frame, no window frame. */
#define ORDER_BEFORE_WINDOWS 1u
/* A stage that may sit behind fanout (emit-svg, emit-firefox): windows shed for it are
 * missing, so window indexes only increase, not always by one. */
#define ORDER_WINDOW_GAPS 2u
/* A stage that counts window stacks (emit-pprof, emit-svg, emit-collapsed): each distinct
 * stack (pid, tid, locations) comes once per window. */
#define ORDER_UNIQUE_STACKS 4u
/* Not a stage: a tool that shows a stream as it is, broken rules and all (streamgen
 * unpack).  No rule is checked. */
#define ORDER_NONE 8u

/* File kinds of one window: more than this many is already a violation. */
#define ORDER_MAX_KINDS 16

struct stream_order {
	unsigned rules;
	int ended;              /* the end frame was read */
	int open;               /* a window is open: index */
	uint32_t index;
	int64_t next;           /* lowest index the next window may have */
	struct stackset stacks, offcpu_stacks, heap_stacks, page_stacks;
	char kinds[ORDER_MAX_KINDS][64];
	unsigned nkinds;
};

/* The frame types a rule names (order.c), a bit each: until the end frame, a frame of any
 * other type breaks no rule, and stream_read does not ask.  The types are stream.h's. */
#define ORDER_RULED_TYPES                                                                    \
	(1ull << FR_END | 1ull << FR_FILE | 1ull << FR_WINDOW_START | 1ull << FR_WINDOW_END | \
	 1ull << FR_WINDOW_STACK | 1ull << FR_WINDOW_OFFCPU_STACK |                           \
	 1ull << FR_WINDOW_HEAP_STACK | 1ull << FR_WINDOW_PAGE_STACK)

/* 0, or -1 with one line in err naming the frame type and the rule it breaks. */
int stream_order_check(struct stream_order *o, const struct frame *f, char *err,
		       size_t errlen);
void stream_order_release(struct stream_order *o);

#endif
