/* tracefs at its place, mounted when missing (tracefs.h). */
#include <errno.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/vfs.h>

#include "errbuf.h"
#include "tracefs.h"

#define HINT "run rustprofile with CAP_SYS_ADMIN/--privileged or mount tracefs at " TRACEFS_DIR

static int
is_tracefs(void)
{
	struct statfs fs;
	return statfs(TRACEFS_DIR, &fs) == 0 && fs.f_type == TRACEFS_MAGIC;
}

int
tracefs_ensure(int *mounted, char *err, size_t errlen)
{
	*mounted = 0;
	if (is_tracefs())
		return 0;
	if (mount("tracefs", TRACEFS_DIR, "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0) {
		*mounted = 1;
		return 0;
	}
	/* Another recording may have mounted it meanwhile. */
	if (errno == EBUSY && is_tracefs())
		return 0;
	if (errno == EPERM)
		return errbuf_fail(err, errlen, "tracefs is not mounted; " HINT);
	return errbuf_fail(err, errlen, "tracefs is not mounted and mounting it failed (%s); " HINT,
			   strerror(errno));
}
