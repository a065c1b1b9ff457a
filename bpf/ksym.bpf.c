// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's name of one kernel address, for collect's FR_KSYM frames (collect/ksyms.h):
 * collect writes the address into addr (the .bss map, which it maps), runs ksym_name with
 * BPF_PROG_TEST_RUN and reads answer, what "%pS" prints: "name+0xoffset/0xsize [module]", or
 * "0x..." for an address no symbol holds.  ksym_text, run once, gives the bounds of the
 * kernel's own code, which tell its functions from BPF programs, trampolines and dispatchers
 * (both without a module in "%pS"; /proc/kallsyms puts the latter in module "bpf").
 * Syscall programs (Linux 5.14; bpf_snprintf 5.13, bpf_kallsyms_lookup_name 5.16): they run
 * only when asked, in collect's own context, and attach to nothing.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "ksym_shared.h"

char LICENSE[] SEC("license") = "GPL";

__u64 addr;
char answer[KSYM_TEXT];
/* The kernel's code: [_stext, _etext) and [_sinittext, _einittext). */
__u64 text[4];
/* In .rodata, which libbpf freezes: bpf_snprintf takes its format from a read-only map. */
static const char fmt[] = "%pS";
static const char stext[] = "_stext", etext[] = "_etext", sinit[] = "_sinittext",
		  einit[] = "_einittext";

SEC("syscall")
int ksym_name(void *ctx)
{
	__u64 args[1] = { addr };

	(void)ctx;
	bpf_snprintf(answer, sizeof(answer), fmt, args, sizeof(args));
	return 0;
}

SEC("syscall")
int ksym_text(void *ctx)
{
	(void)ctx;
	bpf_kallsyms_lookup_name(stext, sizeof(stext), 0, &text[0]);
	bpf_kallsyms_lookup_name(etext, sizeof(etext), 0, &text[1]);
	bpf_kallsyms_lookup_name(sinit, sizeof(sinit), 0, &text[2]);
	bpf_kallsyms_lookup_name(einit, sizeof(einit), 0, &text[3]);
	return 0;
}
