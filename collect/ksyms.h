/*
 * Kernel text symbols from /proc/kallsyms, so collect can send the few that samples hit
 * (FR_KSYM) to stages that cannot read kernel addresses themselves.
 */
#ifndef COLLECT_KSYMS_H
#define COLLECT_KSYMS_H

#include <stddef.h>
#include <stdint.h>

struct ksym {
	uint64_t start, end;    /* end is the next symbol's start */
	char *name;
	char *module;           /* "" for the kernel image; points into name's allocation */
	int sent;
};

struct ksyms {
	struct ksym *v;
	size_t n, cap;
};

/* Loads text symbols (t T w W), sorted by address, one per address.  0, or -1 with errno
 * set; when addresses are hidden (kptr_restrict) the table is simply empty. */
int ksyms_load(struct ksyms *k, const char *path);
/* The symbol containing ip, or NULL. */
struct ksym *ksyms_find(struct ksyms *k, uint64_t ip);
void ksyms_free(struct ksyms *k);

#endif
