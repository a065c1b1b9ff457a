/* lib/defaults.h: every duration default parses, to what the manual says. */
#include <stdio.h>

#include "check.h"
#include "defaults.h"

int
main(void)
{
	CHECK(rp_default_ns(RP_DEFAULT_DURATION) == 60000000000ull);
	CHECK(rp_default_ns(RP_DEFAULT_WINDOW) == 60000000000ull);
	CHECK(rp_default_ns(RP_DEFAULT_EVENT_REORDER_WINDOW) == 100000000ull);
	CHECK(rp_default_ns(RP_DEFAULT_COMPLETION_BUDGET) == 30000000000ull);
	/* The reorder window may not exceed the window, so neither may their defaults. */
	CHECK(rp_default_ns(RP_DEFAULT_EVENT_REORDER_WINDOW) <= rp_default_ns(RP_DEFAULT_WINDOW));
	printf("defaults_test: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
