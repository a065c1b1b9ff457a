#include "kernver.h"

#include <stdio.h>
#include <sys/utsname.h>

int
kernel_below(unsigned major, unsigned minor, const char *what, const char *why_extra,
	     char *why, size_t whylen)
{
	struct utsname u;
	unsigned ma = 0, mi = 0;
	if (uname(&u) < 0 || sscanf(u.release, "%u.%u", &ma, &mi) != 2)
		return 0;
	if (ma > major || (ma == major && mi >= minor))
		return 0;
	snprintf(why, whylen, "%s needs Linux %u.%u or newer%s; this kernel is %s", what, major,
		 minor, why_extra, u.release);
	return 1;
}
