/*
 * Reads of the capture's integers in its own byte order.  A perf.data written on a
 * big-endian machine is read field by field at each field's natural width, which undoes the
 * writer's byte order; bitfields are the exception (see bo_flags).
 */
#ifndef RP_IMPORT_BYTEORDER_H
#define RP_IMPORT_BYTEORDER_H

#include <stdint.h>
#include <string.h>

struct bo {
	int swap; /* the capture's byte order differs from ours */
};

static inline uint16_t
bo16(struct bo b, const uint8_t *p)
{
	uint16_t v;
	memcpy(&v, p, sizeof(v));
	return b.swap ? __builtin_bswap16(v) : v;
}

static inline uint32_t
bo32(struct bo b, const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return b.swap ? __builtin_bswap32(v) : v;
}

static inline uint64_t
bo64(struct bo b, const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return b.swap ? __builtin_bswap64(v) : v;
}

/* perf_event_attr's flag word: a big-endian compiler allocates bitfields from the most
 * significant bit, so after the byte swap the bit order is reversed as well. */
uint64_t bo_flags(struct bo b, const uint8_t *p);

#endif
