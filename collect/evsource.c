/* The choice of the CPU profile's event (evsource.h). */
#include "evsource.h"

#include <err.h>
#include <stdio.h>

#include "perf.h"

void
evsource_choose(struct evsource *e, unsigned freq, int no_cpu, int require_hw)
{
	char why[160];
	e->reason[0] = 0;
	if (no_cpu) {
		e->cycles = 0;
		e->name = "";
		return;
	}
	if (perf_cycles_probe(freq, why, sizeof(why)) == 0) {
		e->cycles = 1;
		e->name = "cycles";
		return;
	}
	if (require_hw)
		errx(1, "--require-hardware-pmu: %s", why);
	e->cycles = 0;
	e->name = "cpu-clock";
	snprintf(e->reason, sizeof(e->reason), "%s: sampling the CPU clock instead", why);
}
