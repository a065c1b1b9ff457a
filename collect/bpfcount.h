/*
 * The loss counters of a BPF program: a per-CPU array of u64, one slot per counter, summed
 * over the CPUs and written as FR_LOST frames of what each grew by since the last call.
 */
#ifndef RP_BPFCOUNT_H
#define RP_BPFCOUNT_H

#include <stdint.h>

#include "emit.h"

/* Counter c of the map fd (ncpu possible CPUs) is lost kind kinds[c] (0: not one), for c
 * below n; counted[c] holds what was written of it already and is brought up to date.
 * A counter that cannot be read now is read at the next call. */
void bpfcount_put(int fd, int ncpu, const uint32_t *kinds, uint32_t n, uint64_t *counted,
		  struct emit *out, uint64_t now);

#endif
