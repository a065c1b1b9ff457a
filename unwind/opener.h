/*
 * The module opener: a helper process that opens module files for the confined unwind.
 *
 * unwind reads the ELF and debug files of the modules the stream maps: from the module
 * cache and the --symbol-dir directories, which its Landlock rules allow, but also at
 * their recorded paths (a module the cache lacks, an imported capture, a .gnu_debuglink
 * file beside its module), which can be anywhere.  Rather than let the stage read the
 * whole file system, opener_start() forks, before the stage confines itself, a helper
 * that may read beneath / but opens nothing except regular ELF files, read-only, and
 * passes the descriptor back over a socket.  So the confined stage reaches every ELF
 * file its uid may read and no other file outside its rules (not /etc/shadow, not a
 * key).  The helper is itself confined (no capabilities, no-new-privs, non-dumpable,
 * Landlock: no writes, no network) and ends when unwind closes its end of the socket.
 */
#ifndef RP_OPENER_H
#define RP_OPENER_H

#include <stddef.h>

/* Starts the helper; call it before rp_confine and before any thread starts.  0, or -1
 * with a one-line reason in err. */
int opener_start(char *err, size_t errlen);

/* Opens path read-only through the helper: a descriptor (close-on-exec), or -1 with
 * errno set (EACCES for a file that is not a regular ELF file, or when there is no
 * helper). */
int opener_open(const char *path);

#endif
