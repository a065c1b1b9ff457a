/*
 * Kernel text symbols, so collect can send the few that samples hit (FR_KSYM) to stages
 * that cannot read kernel addresses themselves.
 *
 * Reading all of /proc/kallsyms costs about 40 ms of kernel CPU (it formats every one of
 * its 100,000 and more lines) plus the parsing, most of a recording's start-up, to name the
 * few dozen functions samples meet.  So a recording asks the kernel for those alone: a
 * small eBPF program (bpf/ksym.bpf.c, ksymbpf.h) prints one address with "%pS", the
 * kernel's own lookup in the same table (a BPF program's symbol ends with the program, where
 * the table's ran to the next symbol).  The whole file is read, once, only when that is not
 * available (before Linux 5.14, BPF disabled) or cannot be sure to give kallsyms' answer (an
 * address it does not name: ftrace and kprobe trampolines; before Linux 5.16, a "bpf_" name
 * without a module, which may be the kernel's or a BPF program's, module "bpf" in kallsyms);
 * it is opened during setup, so that it shows addresses after the capabilities are dropped,
 * and read when a kernel frame first needs it.
 */
#ifndef COLLECT_KSYMS_H
#define COLLECT_KSYMS_H

#include <stddef.h>
#include <stdint.h>

#include "ksymtab.h"

struct ksymbpf;

struct ksyms {
	struct ksymtab tab;     /* sorted by start, one per address, ranges disjoint */
	char *text;             /* the whole file once read: names point into it */
	size_t len, textcap;
	int fd;                 /* the file, open until read whole (once text is set); -1 */
	int loaded;             /* v is the whole file's table (else what lookups found) */
	int hidden;             /* the file shows no addresses: nothing is named */
	struct ksymbpf *live;   /* the kernel's lookup, NULL when unavailable */
	char why[200];          /* why it is, for ksyms_how */
	int verbose;            /* -v: say when the whole file is read */
};

/* Loads the whole table of the kallsyms-format file at path now: text symbols (t T w W),
 * sorted by address, the first name of each address.  0, or -1 with errno set; when
 * addresses are hidden (kptr_restrict) the table is simply empty. */
int ksyms_load(struct ksyms *k, const char *path);
/* For a recording: opens path (/proc/kallsyms) and the kernel's lookup; nothing is read
 * beyond the first lines until ksyms_find needs it.  0, or -1 with errno set; hidden is set
 * when the file shows no addresses.  verbose prints libbpf's messages. */
int ksyms_open(struct ksyms *k, const char *path, int verbose);
/* How names are found, for -v: "eBPF lookup" or why the whole file is read. */
const char *ksyms_how(const struct ksyms *k);
/* The symbol containing ip, or NULL.  The pointer is valid until the next call. */
struct ksym *ksyms_find(struct ksyms *k, uint64_t ip);
void ksyms_free(struct ksyms *k);

#endif
