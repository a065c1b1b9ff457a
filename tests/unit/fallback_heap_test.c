/* auto's fallback judges a window on the lower of its CPU and its heap stack quality
 * (manual: "Unwinding and automatic fallback"): good CPU stacks do not hide allocation
 * stacks that leave the executable mappings, nor the other way round, and a window with
 * no allocation stacks is judged on its CPU stacks alone. */
#include "../../collect/fallback.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

#define W 1000

static struct emit none;        /* no writer: the warnings go nowhere */

/* Window [0, W) with cpu good CPU stacks of cpu_total, heap good of heap_total. */
static int
judge(unsigned cpu, unsigned cpu_total, unsigned heap, unsigned heap_total, const char **why)
{
	static struct fallback f;
	struct unwind_choice u = { .mode = "fp", .calib = { .verdict = "accepted" } };
	uint64_t in[2] = { 0x1010, 0x1020 }, out[2] = { 0x9010, 0x9020 };
	memset(&f, 0, sizeof(f));
	fallback_init(&f, getpid(), W, 0);
	fallback_arm(&f, "auto", &u, 0);
	fallback_map(&f, 0x1000, 0x2000);
	for (unsigned i = 0; i < cpu_total; i++)
		fallback_sample(&f, &none, 10 + i, 0, i < cpu ? in : out, 2);
	for (unsigned i = 0; i < heap_total; i++)
		fallback_heap_stack(&f, &none, 20 + i, i < heap ? in : out, 2);
	fallback_round(&f, &none, W + 1);
	int failed = f.pending;
	*why = "";
	if (failed) {
		static char text[200];
		snprintf(text, sizeof(text), "%s", f.why);
		*why = text;
	}
	fallback_free(&f);
	return failed;
}

int
main(void)
{
	const char *why;
	CHECK(judge(100, 100, 100, 100, &why) == 0);
	/* Heap at 50%: the window fails on it. */
	CHECK(judge(100, 100, 50, 100, &why) == 1 && strstr(why, "allocation stacks") &&
	      strstr(why, "50 of 100"));
	/* CPU at 80%, heap perfect: it fails on the CPU stacks. */
	CHECK(judge(80, 100, 100, 100, &why) == 1 && !strstr(why, "allocation") &&
	      strstr(why, "80 of 100"));
	/* Both poor: the lower one names it. */
	CHECK(judge(85, 100, 10, 100, &why) == 1 && strstr(why, "allocation stacks"));
	/* No allocation stacks: the CPU stacks alone. */
	CHECK(judge(95, 100, 0, 0, &why) == 0);
	CHECK(judge(0, 0, 95, 100, &why) == 0);
	printf("fallback_heap_test: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
