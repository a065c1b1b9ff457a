/*
 * Shared by bpf/ksym.bpf.c and collect/ksymbpf.c: the size of the kernel's answer for one
 * address.  "%pS" prints "name+0xoffset/0xsize [module]": a name of at most KSYM_NAME_LEN
 * (512) bytes, two 64-bit hexadecimal numbers and a module name of at most 56.
 */
#ifndef RP_BPF_KSYM_SHARED_H
#define RP_BPF_KSYM_SHARED_H

#define KSYM_TEXT 640

#endif
