/*
 * Records of a BPF ring held in memory while auto's calibration runs (the stream is not
 * open yet, or its samples are kept to be written in the mode chosen), then released in
 * time order with the calibration's samples.  Every record starts with its 64-bit time.
 * Past the bound, a record is held cut to the length the caller says, and marked so.
 */
#ifndef COLLECT_HELD_H
#define COLLECT_HELD_H

#include <stddef.h>
#include <stdint.h>

struct held {
	unsigned char *buf;     /* each record: a uint64_t length (| HELD_CUT), then it,
				 * padded to 8 bytes */
	size_t len, cap, at;    /* at: the next to release */
	size_t max;             /* bytes held before records are cut */
	uint64_t cut;           /* records held cut */
	uint64_t failed;        /* records not held: out of memory */
};

/* Holds n bytes of data, or its first `cut_to` bytes once the bound is reached (cut_to 0
 * or >= n: never cut). */
void held_add(struct held *h, const void *data, size_t n, size_t cut_to);
/* The next held record stamped at or before until: 1 with it in *data (8-byte aligned),
 * *n and *was_cut, or 0. */
int held_next(struct held *h, uint64_t until, const void **data, size_t *n, int *was_cut);
void held_free(struct held *h);

#endif
