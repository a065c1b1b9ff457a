/* collect's one clock: the stream's (CLOCK_MONOTONIC), in nanoseconds. */
#ifndef COLLECT_CLOCK_H
#define COLLECT_CLOCK_H

#include <stdint.h>

uint64_t collect_now(void);

#endif
