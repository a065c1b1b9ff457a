/*
 * leb: bounded little-endian reads of DWARF's encodings (fixed-size integers, initial
 * lengths and LEB128),
 * shared by the CFI parser and the unit reader.  Each reads from *p below end and moves
 * *p on; a read that would pass end sets *bad, leaves *p at end and gives 0.
 */
#ifndef RP_LEB_H
#define RP_LEB_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t leb_fixed(const uint8_t **p, const uint8_t *end, size_t n, int *bad)
{
	uint64_t v = 0;

	if ((size_t)(end - *p) < n) {
		*bad = 1;
		*p = end;
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)(*p)[i] << (8 * i);
	*p += n;
	return v;
}

/* A DWARF initial length (DWARF 5 section 7.4): the length of what follows, and in
 * *offset_size whether the unit uses 4- or 8-byte offsets.  The reserved values
 * 0xfffffff0 to 0xfffffffe set *bad. */
static inline uint64_t leb_initial_length(const uint8_t **p, const uint8_t *end,
					  unsigned *offset_size, int *bad)
{
	uint64_t len = leb_fixed(p, end, 4, bad);

	*offset_size = 4;
	if (len == 0xffffffffu) {
		*offset_size = 8;
		len = leb_fixed(p, end, 8, bad);
	} else if (len >= 0xfffffff0u) {
		*bad = 1;
	}
	return len;
}

/* The bits of a LEB128 number; *shift is how many it had room for, *last its last byte. */
static inline uint64_t leb_bits(const uint8_t **p, const uint8_t *end, int *bad, unsigned *shift,
				uint8_t *last)
{
	uint64_t v = 0;
	unsigned sh = 0;

	while (*p < end) {
		uint8_t b = *(*p)++;
		if (sh < 64)
			v |= (uint64_t)(b & 0x7f) << sh;
		sh += 7;
		if (!(b & 0x80)) {
			*shift = sh;
			*last = b;
			return v;
		}
	}
	*bad = 1;
	*shift = 0;
	*last = 0;
	return 0;
}

static inline uint64_t leb_u(const uint8_t **p, const uint8_t *end, int *bad)
{
	unsigned sh;
	uint8_t b;

	return leb_bits(p, end, bad, &sh, &b);
}

static inline int64_t leb_s(const uint8_t **p, const uint8_t *end, int *bad)
{
	unsigned sh;
	uint8_t b;
	uint64_t v = leb_bits(p, end, bad, &sh, &b);

	if (sh && sh < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << sh;	/* the sign */
	return (int64_t)v;
}

#endif
