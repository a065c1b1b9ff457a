/*
 * JsonSlabs (JSLB) containers, the binary form of a Firefox processed profile
 * (docs: ../shared/reference/jslb.md).  A file is a 20-byte header, a table of slabs
 * (type, absolute offset, length) and the slab bytes; the root slab is JSON text in which an
 * object whose only key is "$s" stands for another slab: {"$s":3}.  Typed slabs hold
 * little-endian arrays, each aligned to its element size.
 *
 * Writing: add slabs to a jslb (it copies them), mark the root, then jslb_write() streams
 * the container through a callback.  Reading: jslb_decode() checks the container and writes
 * the JSON document it stands for, typed arrays as JSON arrays with numbers formatted by
 * lib/json.h, so a profile written both ways decodes to the same bytes as its JSON form.
 */
#ifndef RP_JSLB_H
#define RP_JSLB_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define JSLB_MAGIC "\xdc\xdf" "JSLB\x01\x00"
#define JSLB_VERSION 1
#define JSLB_HEADER_SIZE 20
#define JSLB_SLAB_ENTRY 12
/* Nested JSON slabs: the profiler's writer nests two deep; more is corrupt or hostile. */
#define JSLB_MAX_DEPTH 16

enum jslb_type {
	JSLB_I8 = 0x00,
	JSLB_U8 = 0x01,
	JSLB_I16 = 0x02,
	JSLB_U16 = 0x03,
	JSLB_I32 = 0x04,
	JSLB_U32 = 0x05,
	JSLB_F32 = 0x06,
	JSLB_F64 = 0x07,
	JSLB_I64 = 0x08,
	JSLB_U64 = 0x09,
	JSLB_JSON = 0x0a,
};

struct jslb_slab {
	uint32_t type;
	uint8_t *data;          /* owned; little-endian bytes for typed slabs */
	size_t len;
};

struct jslb {
	struct jslb_slab *slabs;
	size_t n, cap;
	uint32_t root;
	char err[200];
};

void jslb_init(struct jslb *b);
/* Frees every slab; the jslb can be reused after jslb_init. */
void jslb_release(struct jslb *b);

/* Each returns the new slab's index, or -1 with b->err (out of memory, too big). */
long jslb_add_json(struct jslb *b, const char *text, size_t len);
long jslb_add_i32(struct jslb *b, const int32_t *v, size_t n);
long jslb_add_u8(struct jslb *b, const uint8_t *v, size_t n);
long jslb_add_f64(struct jslb *b, const double *v, size_t n);

/* Streams the container: put returns 0, or -1 to stop (its reason is the caller's).
 * 0, or -1 with b->err when put failed or the file would pass the u32 offsets. */
int jslb_write(struct jslb *b, int (*put)(void *ctx, const void *p, size_t n), void *ctx);

/* Element size of a slab type (also its alignment), or 0 for an unknown type. */
size_t jslb_type_size(uint32_t type);

/* Checks the container in buf and writes the JSON it encodes to out, at most max_out bytes
 * (nested slabs can repeat: the cap bounds the work).  0, or -1 with a reason in err. */
int jslb_decode(const uint8_t *buf, size_t len, FILE *out, size_t max_out, char *err,
		size_t errlen);

#endif
