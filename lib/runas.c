/* runas: a stage becomes the user the driver names (see runas.h). */
#include "runas.h"
#include "errbuf.h"

#include <cap-ng.h>
#include <err.h>
#include <errno.h>
#include <grp.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

/* "UID:GID", both decimal ids below (uid_t)-1 (the kernel's "unchanged"). */
static int
parse_ids(const char *s, uid_t *u, gid_t *g)
{
	char *end;
	uintmax_t a, b;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	a = strtoumax(s, &end, 10);
	if (errno || *end != ':' || end[1] < '0' || end[1] > '9')
		return -1;
	b = strtoumax(end + 1, &end, 10);
	if (errno || *end || a >= (uid_t)-1 || b >= (gid_t)-1)
		return -1;
	*u = (uid_t)a;
	*g = (gid_t)b;
	return 0;
}

/* Bounding and ambient sets first: emptying the bounding set takes CAP_SETPCAP, which a
 * change to a uid other than 0 takes away. */
static int
drop_bounding(char *err, size_t errlen)
{
	capng_get_caps_process();
	capng_clear(CAPNG_SELECT_BOUNDS);
	int rc = capng_apply(CAPNG_SELECT_BOUNDS);
	if (rc < 0)
		return errbuf_fail(err, errlen, "--run-as: cannot empty the bounding set "
				   "(libcap-ng error %d): not started as root?", rc);
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return errbuf_fail(err, errlen, "--run-as: cannot clear the ambient set: %s",
				   strerror(errno));
	return 0;
}

/* The ids, then the capabilities a change to uid 0 keeps, then no-new-privs; checked
 * against the kernel's view. */
static int
become(uid_t u, gid_t g, char *err, size_t errlen)
{
	uid_t ru, eu, su;
	gid_t rg, eg, sg;

	if (setgroups(0, NULL) < 0 || setresgid(g, g, g) < 0 || setresuid(u, u, u) < 0)
		return errbuf_fail(err, errlen, "--run-as %u:%u: %s", (unsigned)u, (unsigned)g,
				   strerror(errno));
	capng_clear(CAPNG_SELECT_CAPS);
	if (capng_apply(CAPNG_SELECT_CAPS) < 0)
		return errbuf_fail(err, errlen, "--run-as: cannot drop capabilities");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return errbuf_fail(err, errlen, "--run-as: PR_SET_NO_NEW_PRIVS: %s",
				   strerror(errno));
	capng_clear(CAPNG_SELECT_ALL);
	if (getresuid(&ru, &eu, &su) < 0 || getresgid(&rg, &eg, &sg) < 0 || ru != u ||
	    eu != u || su != u || rg != g || eg != g || sg != g ||
	    capng_get_caps_process() < 0 || capng_have_capabilities(CAPNG_SELECT_CAPS) != CAPNG_NONE)
		return errbuf_fail(err, errlen, "--run-as %u:%u: the change did not hold",
				   (unsigned)u, (unsigned)g);
	return 0;
}

int
rp_run_as(int *argc, char ***argv, char *err, size_t errlen)
{
	char **v = *argv;
	uid_t u;
	gid_t g;

	if (*argc < 2 || strcmp(v[1], "--run-as") != 0)
		return 0;
	if (*argc < 3 || parse_ids(v[2], &u, &g) < 0)
		return errbuf_fail(err, errlen, "--run-as '%s': not UID:GID",
				   *argc < 3 ? "" : v[2]);
	if (drop_bounding(err, errlen) < 0 || become(u, g, err, errlen) < 0)
		return -1;
	v[2] = v[0];
	*argv = v + 2;
	*argc -= 2;
	return 0;
}

void
rp_run_as_or_exit(int *argc, char ***argv)
{
	char e[200];

	if (rp_run_as(argc, argv, e, sizeof(e)) < 0)
		errx(1, "%s", e);
}
