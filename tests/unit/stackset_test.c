/* lib/stackset and lib/order: a repeated stack is told from a new one whatever the hash
 * says, and the order rules name the frame and the rule. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "stackset.h"
#include "stream.h"

static struct frame
frame_of(uint32_t type, const uint8_t *p, uint32_t len)
{
	return (struct frame){ type, len, p };
}

static void
put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void
test_stackset(void)
{
	struct stackset s = { 0 };
	uint32_t a[3] = { 1, 2, 3 }, b[3] = { 1, 2, 4 };

	CHECK(stackset_add(&s, 100, 100, a, 3) == 1);
	CHECK(stackset_add(&s, 100, 100, a, 3) == 0);
	CHECK(stackset_add(&s, 100, 101, a, 3) == 1);   /* another thread */
	CHECK(stackset_add(&s, 100, 100, b, 3) == 1);   /* another leaf */
	CHECK(stackset_add(&s, 100, 100, a, 2) == 1);   /* a prefix */
	CHECK(stackset_add(&s, 100, 100, NULL, 0) == 1);
	CHECK(stackset_add(&s, 100, 100, NULL, 0) == 0);
	/* Many keys: the table grows and every one is still found once. */
	int added = 0, again = 0;
	for (uint32_t i = 0; i < 100000; i++)
		added += stackset_add(&s, i, 7, &i, 1) == 1;
	for (uint32_t i = 0; i < 100000; i++)
		again += stackset_add(&s, i, 7, &i, 1) == 0;
	CHECK(added == 100000);
	CHECK(again == 100000);
	stackset_clear(&s);
	CHECK(stackset_add(&s, 100, 100, a, 3) == 1);
	stackset_release(&s);
}

static void
test_order(void)
{
	struct stream_order o = { .rules = ORDER_UNIQUE_STACKS };
	uint8_t ws[20] = { 0 }, st[38] = { 0 }, end[12] = { 0 };
	char err[200];
	struct frame f;

	f = frame_of(FR_WINDOW_START, ws, sizeof(ws));
	CHECK(stream_order_check(&o, &f, err, sizeof(err)) == 0);
	put32(st + 4, 100);
	st[28] = 2;
	put32(st + 30, 1);
	put32(st + 34, 2);
	f = frame_of(FR_WINDOW_STACK, st, sizeof(st));
	CHECK(stream_order_check(&o, &f, err, sizeof(err)) == 0);
	CHECK(stream_order_check(&o, &f, err, sizeof(err)) < 0);
	CHECK(strcmp(err, "window-stack frame of window 0 repeats a stack: each distinct stack "
		     "comes once per window") == 0);
	/* The same stack as off-CPU time is another thing. */
	f = frame_of(FR_WINDOW_OFFCPU_STACK, st, sizeof(st));
	CHECK(stream_order_check(&o, &f, err, sizeof(err)) == 0);
	f = frame_of(FR_END, end, sizeof(end));
	CHECK(stream_order_check(&o, &f, err, sizeof(err)) < 0);
	CHECK(strcmp(err, "end frame inside a window: the last window ends before the end "
		     "frame") == 0);
	stream_order_release(&o);

	o = (struct stream_order){ 0 };
	CHECK(stream_order_check(&o, &f, err, sizeof(err)) == 0);
	CHECK(stream_order_check(&o, &f, err, sizeof(err)) < 0);
	CHECK(strcmp(err, "end frame after the end frame: the end frame is the last") == 0);
	stream_order_release(&o);
}

/* stream_read skips the check for a type outside ORDER_RULED_TYPES before the end frame:
 * every such type must pass under every rule set, in and out of a window, and leave the
 * state as it was. */
static void
test_unruled_types(void)
{
	static const unsigned rules[] = { 0, ORDER_BEFORE_WINDOWS, ORDER_WINDOW_GAPS,
					  ORDER_UNIQUE_STACKS, ORDER_BEFORE_WINDOWS |
					  ORDER_UNIQUE_STACKS };
	uint8_t ws[20] = { 0 }, any[64] = { 0 };
	char err[200];

	for (size_t r = 0; r < sizeof(rules) / sizeof(rules[0]); r++) {
		for (int in_window = 0; in_window < 2; in_window++) {
			for (uint32_t t = 1; t < 64; t++) {
				if (ORDER_RULED_TYPES >> t & 1)
					continue;
				struct stream_order o = { .rules = rules[r] };
				struct frame f = frame_of(FR_WINDOW_START, ws, sizeof(ws));
				if (in_window && !(rules[r] & ORDER_BEFORE_WINDOWS))
					CHECK(stream_order_check(&o, &f, err, sizeof(err)) == 0);
				struct stream_order before = o;
				f = frame_of(t, any, sizeof(any));
				CHECK(stream_order_check(&o, &f, err, sizeof(err)) == 0);
				CHECK(o.open == before.open && o.ended == before.ended &&
				      o.index == before.index && o.next == before.next &&
				      o.nkinds == before.nkinds);
				stream_order_release(&o);
			}
		}
	}
}

int
main(void)
{
	test_stackset();
	test_order();
	test_unruled_types();
	printf("stackset_test: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
