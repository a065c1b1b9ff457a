/*
 * Little-endian loads and stores of the stream's fields through memcpy: one instruction
 * each on the usual hosts, where byte-at-a-time shifts compile to a dozen.
 */
#ifndef RP_LE_H
#define RP_LE_H

#include <stdint.h>
#include <string.h>

#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define LE(bits, v) __builtin_bswap##bits(v)
#define LITTLE_ENDIAN_HOST 0
#else
#define LE(bits, v) (v)
#define LITTLE_ENDIAN_HOST 1
#endif
#define LE_ACCESS(bits)                                                                      \
	static inline void st##bits(uint8_t *p, uint##bits##_t v)                            \
	{                                                                                    \
		v = LE(bits, v);                                                             \
		memcpy(p, &v, sizeof(v));                                                    \
	}                                                                                    \
	static inline uint##bits##_t ld##bits(const uint8_t *p)                              \
	{                                                                                    \
		uint##bits##_t v;                                                            \
		memcpy(&v, p, sizeof(v));                                                    \
		return LE(bits, v);                                                          \
	}
LE_ACCESS(16)
LE_ACCESS(32)
LE_ACCESS(64)

#endif
