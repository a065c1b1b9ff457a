#include "defaults.h"

#include <err.h>

#include "parse.h"

uint64_t
rp_default_ns(const char *duration)
{
	uint64_t ns;
	char why[128];
	if (parse_duration(duration, &ns, why, sizeof(why)) < 0)
		errx(1, "built-in default '%s': %s", duration, why);
	return ns;
}
