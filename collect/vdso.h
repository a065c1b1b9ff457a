/*
 * The vDSO's image, for the module cache (collect/vdso.c): the kernel maps it into every
 * process as "[vdso]", a small ELF file that exists nowhere on disk, so its frames would
 * stay unnamed in unwind and in every replay.
 */
#ifndef COLLECT_VDSO_H
#define COLLECT_VDSO_H

#include <stdint.h>

#include "modcache.h"
#include "stream.h"

/* 1 when the mapping m is a vDSO. */
int vdso_mapping(const struct fr_mmap *m);
/* Gives the vDSO mapping m (ending at end) the build id of its image, and files the image
 * in the cache under it (once per image).  Without a readable image m keeps no build id. */
void vdso_file(struct modcache *cache, struct fr_mmap *m, uint64_t end);

#endif
