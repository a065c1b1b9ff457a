/*
 * The physical memory collector: the kmem page allocator tracepoints of bpf/physical.bpf.c,
 * loaded from its skeleton, and the drain that turns its records into FR_PAGE_ALLOC and
 * FR_PAGE_FREE frames and its counters into FR_LOST kinds 13 to 15 (docs/physical.md).
 */
#ifndef COLLECT_PHYSICAL_H
#define COLLECT_PHYSICAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "emit.h"

struct physical;

/* Loads and attaches the program for the processes of pid (one process: pid itself),
 * sampling with probability percent (1..100); NULL with a one-line reason in why. */
struct physical *physical_open(pid_t pid, unsigned probability, int verbose, char *why,
			       size_t whylen);
/* Another process of the target (a child followed); 0, or -1 when the table is full. */
int physical_add_process(struct physical *p, pid_t pid);
/* An fd that becomes readable when the ring buffer asks for a drain (epoll). */
int physical_fd(const struct physical *p);
/* Writes what the ring holds, then what the program counted as lost since the last drain,
 * stamped now. */
void physical_drain(struct physical *p, struct emit *out, uint64_t now);
void physical_close(struct physical *p);

#endif
