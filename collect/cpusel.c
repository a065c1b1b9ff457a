/* --cpuid (cpusel.h). */
#include "cpusel.h"

#include <err.h>
#include <stdio.h>

void
cpusel_parse(struct cpusel *s, const char *arg)
{
	char why[300];
	struct cpulist online;
	if (cpulist_parse(arg, &s->cpus, why, sizeof(why)) < 0)
		errx(1, "--cpuid '%s': %s", arg, why);
	if (cpulist_read(CPULIST_ONLINE, &online, why, sizeof(why)) < 0)
		errx(1, "--cpuid: %s", why);
	int missing = cpulist_first_missing(&s->cpus, &online);
	if (missing >= 0) {
		char have[256];
		cpulist_format(&online, have, sizeof(have));
		errx(1, "--cpuid '%s': CPU %d is not present or not online (online: %s)", arg,
		     missing, have);
	}
	cpulist_format(&s->cpus, s->text, sizeof(s->text));
	s->set = 1;
}
