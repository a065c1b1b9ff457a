#include "kernver.h"

#include <stdio.h>
#include <sys/utsname.h>

int
kernel_older_than(unsigned major, unsigned minor, char *release, size_t len)
{
	struct utsname u;
	unsigned ma = 0, mi = 0;
	if (uname(&u) < 0 || sscanf(u.release, "%u.%u", &ma, &mi) != 2)
		return 0;
	if (ma > major || (ma == major && mi >= minor))
		return 0;
	snprintf(release, len, "%s", u.release);
	return 1;
}
