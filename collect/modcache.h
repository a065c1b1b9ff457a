/*
 * The build-id keyed module cache (--module-cache DIR, OUTPUT/.modules; docs/module-cache.md):
 * DIR/.build-id/ab/cdef... holds, for every ELF file the target maps, what the unprivileged
 * stages read of it, shared by every session that writes to the same output directory.
 * An entry is the reduced copy of elfslim.h when that is at most half the file; else a
 * reflink (FICLONE) or a hard link of the original where the file system allows, else the
 * reduced or a full copy.  The file is opened through the mapping (/proc/PID/map_files), the
 * process's root, the target's root (a short-lived child is often gone by then) or, when
 * collect shares the target's mount namespace, its own path; each candidate must have the
 * mapping's build id.  The cache is capped (--max-module-cache): once full, a module is
 * not copied and collect says so once.  DIR/.sessions/SESSION lists the build ids the
 * session uses and stays locked (flock) while collect runs, so that retention (commit)
 * leaves them alone.
 */
#ifndef COLLECT_MODCACHE_H
#define COLLECT_MODCACHE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MODCACHE_FULL 1 /* modcache_add: not copied, the cache is full (said once) */

struct modcache {
	char *dir;              /* NULL: no cache */
	uint8_t (*done)[21];    /* build ids handled: length byte then the id */
	size_t n, cap;
	uid_t uid;              /* owner of what the cache holds: the owner of DIR's parent, */
	gid_t gid;              /* the output directory, so that its user can remove it */
	dev_t dev;              /* DIR's file system: hard links stay on it */
	uint64_t max_bytes;     /* --max-module-cache */
	uint64_t bytes;         /* held, as last counted plus what this session added */
	uint64_t recount_at;    /* when full: counted again (retention frees) from then on */
	int said_full;
	uint64_t not_copied;    /* modules left out because the cache was full */
	int session_fd;         /* DIR/.sessions/SESSION, locked; -1 without */
	pid_t target;           /* whose root the files of a process already gone are read in */
	int shared_ns;          /* collect and the target share their mount namespace */
};

/* Creates DIR (0755) when missing, owned as its parent directory is, counts what it holds
 * and starts the session's list.  0, or -1 with errno set. */
int modcache_init(struct modcache *m, const char *dir, uint64_t max_bytes,
		  uint64_t session_id, pid_t target);
/* Files the mapped file unless it is there or was handled already.  0, MODCACHE_FULL the
 * first time the cap left a module out, or -1 with a reason in err (collect goes on
 * without that file). */
int modcache_add(struct modcache *m, const uint8_t *bid, size_t len, pid_t pid,
		 uint64_t start, uint64_t end, const char *path, char *err, size_t errlen);
/* The same for a module that is no file (the vDSO's image, collect/vdso.c), open as in. */
int modcache_add_fd(struct modcache *m, const uint8_t *bid, size_t len, int in, char *err,
		    size_t errlen);
/* Makes directory path (0755) owned as the cache is: 0, or -1 with errno set. */
int modcache_mkdir(const struct modcache *m, const char *path);
/* 1 when bytes more fit under --max-module-cache (counting again at most every 10 s once
 * they did not); a caller that writes them adds them to m->bytes. */
int modcache_fits(struct modcache *m, uint64_t bytes);
void modcache_free(struct modcache *m);

#endif
