/*
 * The frame table: the fields of every frame type of docs/stream-format.md, in wire order,
 * written once (lib/frametab.c).  Everything else follows from it: the typed encoders and
 * decoders of stream.h (lib/frames.c walks the table), the text form of frames that the test
 * fixtures are written in (lib/frametext.c), the spec check (tests/stream-spec.bats compares
 * `streamgen layout` with the documented layouts) and the fuzz target that round-trips every
 * type (fuzz/stream_decode.c).  A new frame type is its struct in stream.h, its row here and
 * its section in the spec.
 */
#ifndef RP_FRAMETAB_H
#define RP_FRAMETAB_H

#include <stddef.h>
#include <stdint.h>

#include "stream.h"

enum field_kind {
	FK_U8 = 1,
	FK_U16,
	FK_U32,
	FK_U64,
	FK_I32,
	FK_STR,      /* struct str */
	FK_BID,      /* a u8 length member (len_off) and 20 bytes (off) */
	FK_RESERVED, /* a u32 that is written as 0 and skipped when read: no member */
	FK_ARRAY,    /* count elements decoded into an array member */
	FK_PACKED,   /* count elements left in the frame: the member points at them */
	FK_REC,      /* only as an element: a record of sub fields */
	FK_APPENDED, /* the fields after it, up to the next one, came later (see below) */
	/* Rules on the fields decoded so far, in the order a reader checks them: */
	FK_RANGE,    /* member a is lo..hi */
	FK_ORDERED,  /* member b is not below member a (an end, its start) */
	FK_CHECK,    /* a rule of its own */
};

/* How an array's element count follows from its count members a and b. */
enum field_count {
	COUNT_A = 1,      /* a */
	COUNT_SUM,        /* a + b */
	COUNT_SPANS,      /* (1 + a) x b: a word block per interval, the frame's own first */
};

struct frame_member {
	uint16_t off;
	uint8_t size;    /* bytes: 1, 2, 4 or 8 */
};

struct frame_field {
	uint8_t kind;           /* enum field_kind */
	const char *name;       /* as docs/stream-format.md names it */
	uint16_t off;           /* the member's offset in the decoded struct */
	uint16_t len_off;       /* FK_BID: the length member */
	uint64_t dflt;          /* scalars: the value of an absent field, written for 0 */
	int hex;                /* an address: hex in the text form (elements too) */

	/* FK_ARRAY, FK_PACKED (and the members of FK_RANGE, FK_ORDERED) */
	uint8_t elem;           /* element kind: FK_U8, FK_U32, FK_U64, FK_BID or FK_REC */
	uint8_t count;          /* enum field_count */
	struct frame_member a, b;
	uint32_t max;           /* elements at most */
	uint16_t stride;        /* FK_ARRAY: bytes per element in the struct */
	const struct frame_field *sub; /* FK_REC: the record's fields (offsets in the element) */
	uint8_t nsub;
	int nonzero;            /* FK_U32 elements: 0 is corrupt, checked before the length */
	const char *too_many;   /* reading: more than max */
	const char *write_too_many; /* writing: more than max */
	/* Each element after it is read: NULL or why it is corrupt.  elem is the decoded
	 * element (of FK_PACKED, as stream_elem_get gives it). */
	const char *(*elem_check)(const void *elem);

	/* FK_APPENDED: a group is read when at least min_bytes remain (fewer are ignored) and
	 * its fields take their defaults otherwise; it is written always (when.size 0), or
	 * when member `when` is not 0 or a later group is written. */
	uint8_t min_bytes;
	struct frame_member when;

	/* FK_RANGE, FK_ORDERED, FK_CHECK: why the frame is corrupt when the rule fails (check:
	 * NULL or why).  A rule of an absent group is not checked. */
	uint64_t lo, hi;
	const char *why;
	const char *(*check)(const void *v);
};

struct frame_desc {
	uint32_t type;
	const char *name;
	size_t size;            /* of the decoded struct */
	const struct frame_field *fields;
	size_t nfields;
	/* Before writing: NULL or why v cannot be written (rules across fields). */
	const char *(*write_check)(const void *v);
};

/* The row of a frame type, NULL for an unknown one; every known type is below
 * stream_frame_types(). */
const struct frame_desc *stream_frame_desc(uint32_t type);
uint32_t stream_frame_types(void);

/* The bytes one element of array fl takes in the frame, and element i of a packed array
 * read into *elem (a uint8_t, uint32_t, uint64_t, struct fr_bid or the record's struct) or
 * written from it. */
size_t stream_elem_bytes(const struct frame_field *fl);
void stream_elem_get(const struct frame_field *fl, const uint8_t *packed, size_t i, void *elem);
void stream_elem_put(const struct frame_field *fl, uint8_t *packed, size_t i, const void *elem);
/* The member of a scalar field (FK_U8 to FK_I32), the element count of array field fl of
 * decoded struct v, and a member's value. */
struct frame_member stream_field_member(const struct frame_field *fl);
uint64_t stream_field_count(const struct frame_field *fl, const void *v);
uint64_t stream_member_get(const void *v, struct frame_member m);
void stream_member_set(void *v, struct frame_member m, uint64_t x);

/* One buffer big enough for any decoded frame, so a caller needs no allocation per type. */
union stream_any_frame {
	struct fr_target target;
	struct fr_mmap mmap;
	struct fr_comm comm;
	struct fr_task task;
	struct fr_sample sample;
	struct fr_lost lost;
	struct fr_ksym ksym;
	struct fr_round round;
	struct fr_target_exit target_exit;
	struct fr_end end;
	struct fr_warning warning;
	struct fr_usym usym;
	struct fr_jit jit;
	struct fr_sample_regs sample_regs;
	struct fr_mapping mapping;
	struct fr_function function;
	struct fr_location location;
	struct fr_stack stack;
	struct fr_window_start window_start;
	struct fr_window_stack window_stack;
	struct fr_window_end window_end;
	struct fr_file file;
	struct fr_forget forget;
	struct fr_modules modules;
	struct fr_export export_;
	struct fr_offcpu offcpu;
	struct fr_offcpu_stack offcpu_stack;
	struct fr_alloc alloc;
	struct fr_heap_free heap_free;
	struct fr_heap_reset heap_reset;
	struct fr_heap_stack heap_stack;
	struct fr_window_heap_stack window_heap_stack;
	struct fr_page_alloc page_alloc;
	struct fr_page_free page_free;
	struct fr_page_stack page_stack;
	struct fr_window_page_stack window_page_stack;
	struct fr_debuginfod debuginfod;
};

/* Any known frame type, by its row: v is the type's struct (fr_task for fork and exit,
 * fr_window_stack for window-offcpu-stack).  0, or -1 with a reason (w->err, err). */
int stream_put_frame(struct stream_writer *w, uint32_t type, const void *v);
int stream_get_frame(const struct frame *f, void *v, char *err, size_t errlen);
/* Encodes v as a frame of type into w's scratch buffer without writing it: the payload
 * (valid until w encodes again) and its length in *len, or NULL with w->err.  w needs no
 * stream_writer_open for this; stream_writer_release frees the buffer. */
const uint8_t *stream_frame_encode(struct stream_writer *w, uint32_t type, const void *v,
				   uint32_t *len);

#endif
