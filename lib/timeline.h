/*
 * The timestamped samples of the window in progress (emit-firefox, emit-otlp --timeline):
 * every FR_STACK frame aggregate forwards between one window end and the next is a sample
 * of the next window to close (aggregate
 * counts a stack into a window before forwarding it, late ones included), so the buffer is
 * simply cleared at each window end.  At most max samples are kept, the earliest; the rest
 * are only counted.
 */
#ifndef RP_TIMELINE_H
#define RP_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "stream.h"

/* tl_sample.flags: an off-CPU piece (from start for period ns), not a CPU sample. */
#define TL_OFFCPU 0x80000000u

struct tl_sample {
	uint64_t time, period;
	uint32_t pid, tid, cpu, flags;  /* STACK_* flags, and TL_OFFCPU */
	size_t locs;            /* first location id in timeline.locs, leaf first */
	uint16_t nlocs;
};

struct timeline {
	struct tl_sample *s;
	size_t n, cap;
	uint32_t *locs;
	size_t nlocs, cap_locs;
	uint64_t max;           /* samples kept per window */
	uint64_t dropped;       /* samples past max in this window */
};

void timeline_init(struct timeline *t, uint64_t max);
void timeline_release(struct timeline *t);
void timeline_clear(struct timeline *t);
/* Keeps s, or counts it as dropped when the window is full: 0; -1 when out of memory. */
int timeline_add(struct timeline *t, const struct fr_stack *s);
/* The same for an off-CPU piece: a sample at its start weighing its length. */
int timeline_add_offcpu(struct timeline *t, const struct fr_offcpu_stack *s);
/* The same for any entry v (its locs and nlocs fields are set here from locs). */
int timeline_add_entry(struct timeline *t, const struct tl_sample *v, const uint32_t *locs,
		       uint16_t nlocs);

#endif
