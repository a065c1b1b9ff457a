/*
 * The kernel's own name of a kernel address, through bpf/ksym.bpf.c: one BPF_PROG_TEST_RUN
 * of a few microseconds, instead of reading all of /proc/kallsyms (ksyms.h).
 */
#ifndef COLLECT_KSYMBPF_H
#define COLLECT_KSYMBPF_H

#include <stddef.h>
#include <stdint.h>

struct ksymbpf;

struct ksymbpf_answer {
	uint64_t start, end;    /* the symbol's range, as the kernel sizes it */
	char name[512];
	char module[64];        /* "" without one */
	/* Without a module: 1 in the kernel's own code, 0 outside it (a BPF program,
	 * trampoline or dispatcher), -1 when its bounds are not known (before Linux 5.16). */
	int kernel_text;
};

/* Loads the program (needs CAP_BPF and CAP_PERFMON, or root before 5.8; running it later
 * needs CAP_BPF before Linux 6.5).  NULL with a reason in why when the kernel cannot. */
struct ksymbpf *ksymbpf_open(int verbose, char *why, size_t whylen);
/* 1 with *a filled, 0 when the kernel names nothing at ip, -1 when the run failed. */
int ksymbpf_lookup(struct ksymbpf *kb, uint64_t ip, struct ksymbpf_answer *a);
void ksymbpf_close(struct ksymbpf *kb);

/* Reads what "%pS" printed for ip: 1 with *a filled, 0 when it is no symbol's (a bare
 * "0x..." address, a size of 0, an offset beyond the size, or text cut short). */
int ksymbpf_parse(const char *text, uint64_t ip, struct ksymbpf_answer *a);

#endif
