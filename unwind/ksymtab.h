/*
 * Kernel symbols as collect sent them (FR_KSYM): only the ones samples touched, since this
 * stage has no access to /proc/kallsyms.
 */
#ifndef RP_KSYMTAB_H
#define RP_KSYMTAB_H

#include <stddef.h>
#include <stdint.h>

#include "stream.h"

struct ksym {
	uint64_t start, end;
	char *name;
	char *module;
};

struct ksymtab {
	struct ksym *syms;
	size_t n, cap;
	int sorted;
};

int ksymtab_add(struct ksymtab *t, const struct fr_ksym *k);
const struct ksym *ksymtab_find(struct ksymtab *t, uint64_t addr);
void ksymtab_release(struct ksymtab *t);

#endif
