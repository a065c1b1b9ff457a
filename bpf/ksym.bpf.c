// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's name of one kernel address, for collect's FR_KSYM frames (collect/ksyms.h):
 * collect writes the address into addr (the .bss map, which it maps), runs the program with
 * BPF_PROG_TEST_RUN and reads text, what "%pS" prints: "name+0xoffset/0xsize [module]", or
 * "0x..." for an address no symbol holds.  A syscall program (Linux 5.14; bpf_snprintf
 * 5.13): it runs only when asked, in collect's own context, and attaches to nothing.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "ksym_shared.h"

char LICENSE[] SEC("license") = "GPL";

__u64 addr;
char text[KSYM_TEXT];
/* In .rodata, which libbpf freezes: bpf_snprintf takes its format from a read-only map. */
static const char fmt[] = "%pS";

SEC("syscall")
int ksym_name(void *ctx)
{
	__u64 args[1] = { addr };

	(void)ctx;
	bpf_snprintf(text, sizeof(text), fmt, args, sizeof(args));
	return 0;
}
