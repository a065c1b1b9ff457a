/* The cycles event's pprof values (docs/host.md): a target frame of cpu_event "cycles" in
 * frequency mode makes the profile carry cycles and a CPU-time estimate of 1/F s per
 * sample; any other target keeps CPU nanoseconds alone.  The stream field round-trips. */
#include <string.h>

#include "defs.h"
#include "stream.h"

#include "check.h"

static int
cycles_of(const char *event, uint32_t hz)
{
	struct defs d;
	struct fr_target t = { .pid = 1, .cpu_frequency = hz, .kind = str_of("pid"),
			       .cpu_event = str_of(event) };
	defs_init(&d);
	int rc = defs_set_target(&d, &t);
	int cycles = d.cycles;
	defs_release(&d);
	return rc == 0 ? cycles : -1;
}

int
main(void)
{
	CHECK(defs_cycles_ns(1, 99) == 10101010);
	CHECK(defs_cycles_ns(99, 99) == 1000000000);
	CHECK(defs_cycles_ns(49, 49) == 1000000000);
	CHECK(defs_cycles_ns(3, 1) == 3000000000ull);
	CHECK(defs_cycles_ns(0, 99) == 0);
	CHECK(defs_cycles_ns(5, 0) == 0);
	/* a day of samples at 999 Hz stays exact to the nanosecond per second */
	CHECK(defs_cycles_ns(999ull * 86400, 999) == 86400ull * 1000000000);

	CHECK(cycles_of("cycles", 99) == 1);
	CHECK(cycles_of("cycles", 0) == 0);     /* no frequency: no estimate */
	CHECK(cycles_of("cpu-clock", 99) == 0);
	CHECK(cycles_of("", 99) == 0);

	printf("cycles: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
