/* lib/u32set: ids stay sorted and unique through adds and removals. */
#include <stdio.h>

#include "check.h"
#include "u32set.h"

static int
sorted(const struct u32set *s)
{
	for (size_t i = 1; i < s->n; i++)
		if (s->v[i - 1] >= s->v[i])
			return 0;
	return 1;
}

int
main(void)
{
	struct u32set s = { 0 };
	int found;

	CHECK(u32set_find(&s, 5, &found) == 0 && !found);
	CHECK(!u32set_has(&s, 5));
	/* In an order that inserts at the front, the back and the middle. */
	static const uint32_t in[] = { 50, 10, 90, 30, 70, 10, 90, 0, 4294967295u };
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++)
		CHECK(u32set_add(&s, in[i]) == 0);
	CHECK(s.n == 7 && sorted(&s));
	CHECK(s.v[0] == 0 && s.v[6] == 4294967295u);
	CHECK(u32set_find(&s, 30, &found) == 2 && found);
	CHECK(u32set_find(&s, 31, &found) == 3 && !found);
	CHECK(u32set_find(&s, 100, &found) == 6 && !found);
	u32set_remove(&s, 31); /* absent: nothing changes */
	CHECK(s.n == 7);
	u32set_remove(&s, 0);
	u32set_remove_at(&s, u32set_find(&s, 4294967295u, &found));
	u32set_remove(&s, 50);
	CHECK(s.n == 4 && sorted(&s) && !u32set_has(&s, 50) && u32set_has(&s, 70));
	/* Past the first allocation, in a scrambled order (1009 is prime). */
	for (uint32_t i = 0; i < 1000; i++)
		CHECK(u32set_add(&s, 1000 + i * 7919u % 1009u) == 0);
	CHECK(s.n == 4 + 1000 && sorted(&s) && s.v[3] == 90 && s.v[4] >= 1000);
	u32set_free(&s);
	CHECK(s.n == 0 && s.v == NULL && !u32set_has(&s, 10));
	printf("u32set_test: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
