/*
 * CPU lists in the kernel's notation ("0-3,5,7-8"), as /sys/devices/system/cpu/online
 * writes them and --cpuid takes them: numbers and ranges a-b (a <= b) separated by commas.
 * Kept as a bitset of CPUs below CPULIST_MAX, the most perf and eBPF are asked about.
 */
#ifndef RP_CPULIST_H
#define RP_CPULIST_H

#include <stddef.h>
#include <stdint.h>

#define CPULIST_MAX 4096

struct cpulist {
	uint64_t bits[CPULIST_MAX / 64];
	int n;                  /* CPUs in the set */
};

/* Parses s (one trailing newline allowed).  0, or -1 with a one-line reason in err that
 * names the problem (empty, junk, a reversed range, a CPU too high); l is cleared first. */
int cpulist_parse(const char *s, struct cpulist *l, char *err, size_t errlen);
/* The list in the file at path (CPULIST_ONLINE): 0, or -1 with a one-line reason. */
#define CPULIST_ONLINE "/sys/devices/system/cpu/online"
int cpulist_read(const char *path, struct cpulist *l, char *err, size_t errlen);
int cpulist_has(const struct cpulist *l, int cpu);
void cpulist_add(struct cpulist *l, int cpu);
/* The first CPU of sub that set does not hold, or -1 when every one is held. */
int cpulist_first_missing(const struct cpulist *sub, const struct cpulist *set);
/* The canonical text ("2,4-7"), truncated to size; "" for an empty list. */
void cpulist_format(const struct cpulist *l, char *out, size_t size);

#endif
