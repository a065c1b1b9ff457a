/*
 * A table of kernel text symbols: what /proc/kallsyms (or a copy of another machine's) says,
 * or the few symbols collect sent in FR_KSYM frames.  collect, import and unwind all look
 * kernel addresses up in it, and collect and import parse kallsyms text with the one parser
 * here.
 */
#ifndef RP_KSYMTAB_H
#define RP_KSYMTAB_H

#include <stddef.h>
#include <stdint.h>

struct ksym {
	uint64_t start, end;    /* end: the next symbol's start, or as a frame gave it */
	char *name;
	char *module;           /* "" for the kernel image */
	int sent;               /* the user's mark: already sent on */
};

struct ksymtab {
	struct ksym *v;         /* sorted by start once ordered */
	size_t n, cap;
};

/* Room for n more symbols.  0, or -1 when out of memory. */
int ksymtab_reserve(struct ksymtab *t, size_t n);

/* Fills the empty table t with the text symbols (types t T w W) of the kallsyms lines text[0, len), whose names
 * and modules are ended in place and stay pointers into text; text[len] must be writable.
 * Then orders the table: sorted by address (kallsyms is, but for modules and BPF programs
 * after the kernel's own), the file's first name of each address, each symbol ending where
 * the next starts and the last after one page.  Lines at address 0 (kptr_restrict hides
 * every address) are left out and counted in *zeros when zeros is not NULL.
 * 0, or -1 when out of memory. */
int ksymtab_parse(struct ksymtab *t, char *text, size_t len, size_t *zeros);

/* Sorts symbols whose ends are known already (as FR_KSYM frames give them), keeping the
 * first of each address. */
void ksymtab_sort(struct ksymtab *t);

/* The symbol containing ip in an ordered table, or NULL.  *at (when at is not NULL) is
 * where a symbol starting at ip would be inserted.  A symbol whose end is its start covers
 * everything up to the next one. */
struct ksym *ksymtab_find(const struct ksymtab *t, uint64_t ip, size_t *at);

/* Frees the array (not the names, which belong to whoever made them). */
void ksymtab_clear(struct ksymtab *t);

#endif
