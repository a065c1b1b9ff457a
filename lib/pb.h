/*
 * A small protobuf writer: varints, length-delimited fields and nested messages appended
 * to a growable buffer.
 *
 * Nested messages (and packed repeated scalars) are written by pb_open, which emits the tag
 * and reserves one length byte, and pb_close, which patches the length and slides the body
 * when the length needs more than one byte.  Most pprof sub-messages are shorter than 128
 * bytes, so the slide is rare and cheap.
 *
 * Allocation failure does not stop the caller at each call: the buffer remembers it and
 * pb_failed reports it once the message is complete (lib code never exits).
 */
#ifndef RP_PB_H
#define RP_PB_H

#include <stddef.h>
#include <stdint.h>

enum pb_wire { PB_VARINT = 0, PB_LEN = 2 };

struct pb {
	uint8_t *buf;
	size_t len, cap;
	int failed;             /* set when an allocation failed; contents are then unusable */
};

void pb_init(struct pb *b);
/* Forgets the contents and keeps the memory for the next message. */
void pb_reset(struct pb *b);
void pb_release(struct pb *b);
int pb_failed(const struct pb *b);

/* Number of bytes v takes as a varint (1..10). */
size_t pb_varint_size(uint64_t v);

/* Low level: a bare varint, raw bytes, a tag. */
void pb_varint(struct pb *b, uint64_t v);
void pb_raw(struct pb *b, const void *p, size_t n);
void pb_tag(struct pb *b, uint32_t field, enum pb_wire wire);

/* field = v; int64 values are sent as their two's complement (negative: 10 bytes). */
void pb_uint(struct pb *b, uint32_t field, uint64_t v);
void pb_int(struct pb *b, uint32_t field, int64_t v);
/* Same, but nothing is written for 0 (the proto3 default). */
void pb_uint_opt(struct pb *b, uint32_t field, uint64_t v);
/* field = length-delimited bytes (strings, embedded encodings). */
void pb_bytes(struct pb *b, uint32_t field, const void *p, size_t n);

/* Starts a nested message or packed list of field; returns the mark for pb_close. */
size_t pb_open(struct pb *b, uint32_t field);
/* Ends what pb_open(mark) started.  Marks nest: close the innermost first. */
void pb_close(struct pb *b, size_t mark);

#endif
