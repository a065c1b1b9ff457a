/*
 * The build-id keyed module cache (--module-cache DIR): DIR/.build-id/ab/cdef... holds a
 * copy of every executable file the target maps, so unprivileged stages can read it.
 */
#ifndef COLLECT_MODCACHE_H
#define COLLECT_MODCACHE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct modcache {
	char *dir;              /* NULL: no cache */
	uint8_t (*done)[21];    /* build ids handled: length byte then the id */
	size_t n, cap;
	uid_t uid;              /* owner of what the cache holds: the owner of DIR's parent, */
	gid_t gid;              /* the output directory, so that its user can remove it */
};

/* Creates DIR (0755) when missing, owned as its parent directory is.  0, or -1 with errno
 * set. */
int modcache_init(struct modcache *m, const char *dir);
/* Copies the mapped file into the cache unless it is there or was handled already.
 * 0, or -1 with a reason in err (collect goes on without that file). */
int modcache_add(struct modcache *m, const uint8_t *bid, size_t len, pid_t pid,
		 uint64_t start, uint64_t end, const char *path, char *err, size_t errlen);
void modcache_free(struct modcache *m);

#endif
