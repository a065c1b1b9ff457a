/* collect's kernel symbol table (ksyms.h), opened once: by the calibration or, without one,
 * at the end of setup. */
#include <err.h>

#include "collect.h"

/* Opened once the events are (it shows addresses to the credentials that open it, so
 * before the capabilities go); kernel frames are then named as they come (ksyms.h). */
void
collect_ksyms(struct collect *c)
{
	static int loaded;
	if (loaded++)
		return;
	if (ksyms_open(&c->ksyms, "/proc/kallsyms", c->o.verbose) < 0)
		warn("cannot read /proc/kallsyms; kernel frames stay unnamed");
	else if (c->ksyms.hidden)
		warnx("/proc/kallsyms shows no addresses; kernel frames stay unnamed");
	else if (c->o.verbose)
		warnx("kernel symbols: %s", ksyms_how(&c->ksyms));
}
