/*
 * runas: a stage started as root becomes another user by itself (docs/privileges.md).
 *
 * The driver starts each stage after collect as `STAGE --run-as UID:GID OPTIONS...`, rather
 * than behind setpriv(1): one process start per stage instead of two.  The call comes first
 * in main(), before option parsing opens anything, and leaves the process as
 * `setpriv --reuid=UID --regid=GID --clear-groups --inh-caps=-all --bounding-set=-all
 * --no-new-privs` would have started it: no supplementary groups, real, effective and saved
 * ids UID and GID, no capability in any set (bounding and ambient too), no-new-privs.
 */
#ifndef RP_RUNAS_H
#define RP_RUNAS_H

#include <stddef.h>

/* When argv[1] is "--run-as", becomes the user argv[2] names and removes both from the
 * argument vector (argv[0] moves up); otherwise changes nothing.  0, or -1 with a one-line
 * reason in err: a malformed value, or a change the kernel refused (not started as root). */
int rp_run_as(int *argc, char ***argv, char *err, size_t errlen);

/* rp_run_as, or the reason on stderr and exit status 1. */
void rp_run_as_or_exit(int *argc, char ***argv);

#endif
