/* collect/names: a thread's name and when it was set; a new task's own name, come before
 * its FORK from another CPU's ring, is not overwritten by its creator's. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "../../collect/names.h"

int
main(void)
{
	struct names t = { 0 };

	CHECK(names_get(&t, 7) == NULL && !names_set_since(&t, 7, 0));
	names_set(&t, 7, "reader", 6, 2000);
	CHECK(names_get(&t, 7) && strcmp(names_get(&t, 7), "reader") == 0);
	/* A FORK at 1000 of tid 7 comes after its rename at 2000: the rename stands. */
	CHECK(names_set_since(&t, 7, 1000));
	/* A reused tid forked at 3000: the old name is of another thread. */
	CHECK(!names_set_since(&t, 7, 3000));
	/* Names are cut at the kernel's length, and many tids grow the table. */
	names_set(&t, 8, "a-name-longer-than-fifteen", 26, 10);
	CHECK(strlen(names_get(&t, 8)) == NAMES_LEN - 1);
	for (uint32_t i = 100; i < 5000; i++)
		names_set(&t, i, "w", 1, i);
	CHECK(names_set_since(&t, 4999, 4999) && !names_set_since(&t, 4999, 5000));
	CHECK(strcmp(names_get(&t, 7), "reader") == 0);
	CHECK(names_get(&t, 0) == NULL); /* the idle task is nobody */
	names_free(&t);
	CHECK(names_get(&t, 7) == NULL);
	printf("names_test: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
