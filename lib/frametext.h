/*
 * Frames as lines of text, from the frame table (frametab.h): what the test fixtures are
 * written in (tests/streams/, `streamgen pack`) and what `streamgen unpack` prints.
 *
 *   NAME VALUE... FIELD=VALUE...
 *
 * NAME is the frame type's name (stream_frame_name).  Values fill the fields in the order of
 * docs/stream-format.md, then FIELD=VALUE sets any field by its name; a field not given is 0
 * or empty (or its appended default).  Numbers are C literals (0x..., -1 for an i32).
 * Strings and build ids are one word: "\xHH" is any byte, "\\" a backslash, "" the empty
 * string; a build id is hex.  An array is one word of elements split by ',', a record's
 * fields split by ':' ("lines=7:10,8:20"); bytes (a stack copy) are one hex word.  The count
 * of an array that has one (nlocs) follows from its elements unless given.
 *
 *   raw TYPE HEX...      any frame: its type and payload bytes
 *
 * Blank lines and words from "#" on are comments.
 */
#ifndef RP_FRAMETEXT_H
#define RP_FRAMETEXT_H

#include <stdio.h>

#include "stream.h"

/* Writes f on out as one line: by field, leaving out those at their default, when that line
 * packs back into f's very bytes; else as raw.  0, or -1 when out fails. */
int stream_frame_print(FILE *out, const struct frame *f);

/* Packs line (changed in place) into one frame written on w.  1: a frame written; 0: the
 * line holds no frame (a comment) or names no frame type, for the caller to read; -1: the
 * line is wrong, why in err (or a write failed, why in w->err and err). */
int stream_frame_pack(struct stream_writer *w, char *line, char *err, size_t errlen);

/* Bytes as lowercase hex, and hex (white space allowed between bytes) read back into out
 * (at most cap bytes): the count, or -1. */
void stream_hex_print(FILE *out, const uint8_t *p, size_t n);
long stream_hex_parse(const char *s, uint8_t *out, size_t cap);

#endif
