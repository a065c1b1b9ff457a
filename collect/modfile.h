/*
 * One module cache entry: finding the mapped file, and writing it into the cache (see
 * modcache.h for the order of both).
 */
#ifndef COLLECT_MODFILE_H
#define COLLECT_MODFILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct modcache;

/* The mapped file with build id bid, open read-only: -1 with a reason in err when no
 * candidate has it. */
int modfile_open(const struct modcache *m, const uint8_t *bid, size_t len, pid_t pid,
		 uint64_t start, uint64_t end, const char *path, char *err, size_t errlen);
/* Bytes the entry for in would take at most: what the cap is checked against. */
uint64_t modfile_estimate(int in);
/* Writes the entry final for the open file in (through a temporary name); *bytes is what
 * it takes on disk.  0, or -1 with a reason in err. */
int modfile_store(const struct modcache *m, int in, const char *final, uint64_t *bytes,
		  char *err, size_t errlen);

#endif
