/*
 * The encoder and the decoder of every frame type in docs/stream-format.md, walking the rows
 * of lib/frametab.c: a layout is written once, as its row, and both directions follow it.
 * Decoders stop at the first missing byte or broken rule and say which frame it was; bytes
 * past the known fields are ignored so that fields can be appended in later versions.
 */
#include "frametab.h"
#include "le.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline uint8_t
ld8(const uint8_t *p)
{
	return *p;
}

/* ---- members of a decoded struct, by offset ---- */

static inline void *
at(void *v, size_t off)
{
	return (char *)v + off;
}

static inline const void *
cat(const void *v, size_t off)
{
	return (const char *)v + off;
}

static inline uint64_t
member_get(const void *v, struct frame_member m)
{
	uint8_t b;
	uint16_t h;
	uint32_t u;
	uint64_t q;

	switch (m.size) {
	case 1: memcpy(&b, cat(v, m.off), 1); return b;
	case 2: memcpy(&h, cat(v, m.off), 2); return h;
	case 4: memcpy(&u, cat(v, m.off), 4); return u;
	default: memcpy(&q, cat(v, m.off), 8); return q;
	}
}

uint64_t
stream_member_get(const void *v, struct frame_member m)
{
	return member_get(v, m);
}

void
stream_member_set(void *v, struct frame_member m, uint64_t x)
{
	uint8_t b = (uint8_t)x;
	uint16_t h = (uint16_t)x;
	uint32_t u = (uint32_t)x;

	switch (m.size) {
	case 1: memcpy(at(v, m.off), &b, 1); break;
	case 2: memcpy(at(v, m.off), &h, 2); break;
	case 4: memcpy(at(v, m.off), &u, 4); break;
	default: memcpy(at(v, m.off), &x, 8); break;
	}
}

/* The width of a scalar field's member and its wire bytes, the same (0: not a scalar). */
static inline struct frame_member
scalar(const struct frame_field *fl)
{
	static const uint8_t width[FK_CHECK + 1] = { [FK_U8] = 1, [FK_U16] = 2, [FK_U32] = 4,
						     [FK_U64] = 8, [FK_I32] = 4 };
	return (struct frame_member){ fl->off, width[fl->kind] };
}

struct frame_member
stream_field_member(const struct frame_field *fl)
{
	return scalar(fl);
}

/* ---- the plan of a type: what coding its frames takes that follows from its row alone ---- */

/* A frame's leading scalars that lie on the wire where they lie in its struct, with no
 * default to put in for 0: on a little-endian host their bytes are the struct's own, so one
 * copy decodes or encodes them all.  They are most of the fields of the frames every sample
 * makes (sample, stack), where walking the row field by field cost a sixth of a stage.  What
 * those have after them is one array of u32 or u64 elements (the tail), which is then taken
 * without the walk too. */
struct plan {
	const struct frame_desc *desc; /* the row; NULL: no such type */
	uint16_t bytes;         /* copied */
	uint16_t fields;        /* rows they cover */
	uint16_t zero[2];       /* 1 + the offset of reserved bytes, written 0; 0: none */
	/* The row's one field after them when it is an array of u32 or u64 elements with no
	 * rule but nonzero, in a row with no write check; NULL: none. */
	const struct frame_field *tail;
	uint8_t tail_elem;      /* its bytes per element */
};

#define PLAN_TYPES 256
static struct plan plans[PLAN_TYPES];

/* The tail of row d after its first i fields, or NULL. */
static const struct frame_field *
tail_of(const struct frame_desc *d, size_t i)
{
	const struct frame_field *fl = &d->fields[i];
	if (i + 1 != d->nfields || fl->kind != FK_ARRAY || d->write_check || fl->elem_check ||
	    (fl->elem != FK_U32 && fl->elem != FK_U64) || (fl->nonzero && fl->elem != FK_U32) ||
	    fl->count == COUNT_SPANS)
		return NULL;
	return fl;
}

__attribute__((constructor)) static void
plan_types(void)
{
	for (uint32_t t = 0; t < stream_frame_types() && t < PLAN_TYPES; t++) {
		const struct frame_desc *d = stream_frame_desc(t);
		struct plan pl = { d, 0, 0, { 0, 0 }, NULL, 0 };
		size_t pos = 0, i = 0, nz = 0;
		/* A big-endian host copies nothing: every field is walked, byte-swapped. */
		for (; LITTLE_ENDIAN_HOST && d && i < d->nfields; i++) {
			const struct frame_field *fl = &d->fields[i];
			int reserved = fl->kind == FK_RESERVED;
			size_t size = reserved ? 4 : scalar(fl).size;
			if (!size || fl->dflt || fl->off != pos || pos + size > d->size ||
			    (reserved && nz == 2))
				break;
			if (reserved)
				pl.zero[nz++] = (uint16_t)(pos + 1);
			pos += size;
		}
		pl.bytes = (uint16_t)pos;
		pl.fields = (uint16_t)i;
		if (pos && (pl.tail = tail_of(d, i)))
			pl.tail_elem = pl.tail->elem == FK_U32 ? 4 : 8;
		plans[t] = pl;
	}
}

static inline const struct plan *
plan_of(uint32_t type)
{
	static const struct plan none;
	return type < PLAN_TYPES ? &plans[type] : &none;
}

static inline uint64_t
count_of(const struct frame_field *fl, const void *v)
{
	uint64_t a = member_get(v, fl->a);

	switch (fl->count) {
	case COUNT_SUM: return a + member_get(v, fl->b);
	case COUNT_SPANS: return (1 + a) * member_get(v, fl->b);
	default: return a;
	}
}

uint64_t
stream_field_count(const struct frame_field *fl, const void *v)
{
	return count_of(fl, v);
}

size_t
stream_elem_bytes(const struct frame_field *fl)
{
	size_t n = 0;

	switch (fl->elem) {
	case FK_U8: return 1;
	case FK_U32: return 4;
	case FK_U64: return 8;
	case FK_BID: return 1 + STREAM_BUILD_ID_MAX;
	default:
		for (uint8_t i = 0; i < fl->nsub; i++)
			n += scalar(&fl->sub[i]).size;
		return n;
	}
}

void
stream_elem_get(const struct frame_field *fl, const uint8_t *packed, size_t i, void *elem)
{
	const uint8_t *p = packed + i * stream_elem_bytes(fl);
	struct fr_bid *b = elem;

	switch (fl->elem) {
	case FK_U8: *(uint8_t *)elem = *p; break;
	case FK_U32: *(uint32_t *)elem = ld32(p); break;
	case FK_U64: *(uint64_t *)elem = ld64(p); break;
	case FK_BID:
		b->len = p[0];
		memcpy(b->id, p + 1, STREAM_BUILD_ID_MAX);
		break;
	default:
		for (uint8_t k = 0; k < fl->nsub; k++) {
			struct frame_member m = scalar(&fl->sub[k]);
			stream_member_set(elem, m, m.size == 8 ? ld64(p) : ld32(p));
			p += m.size;
		}
	}
}

void
stream_elem_put(const struct frame_field *fl, uint8_t *packed, size_t i, const void *elem)
{
	uint8_t *p = packed + i * stream_elem_bytes(fl);
	const struct fr_bid *b = elem;

	switch (fl->elem) {
	case FK_U8: *p = *(const uint8_t *)elem; break;
	case FK_U32: st32(p, *(const uint32_t *)elem); break;
	case FK_U64: st64(p, *(const uint64_t *)elem); break;
	case FK_BID:
		memset(p, 0, 1 + STREAM_BUILD_ID_MAX);
		p[0] = b->len > STREAM_BUILD_ID_MAX ? STREAM_BUILD_ID_MAX : b->len;
		memcpy(p + 1, b->id, p[0]);
		break;
	default:
		for (uint8_t k = 0; k < fl->nsub; k++) {
			struct frame_member m = scalar(&fl->sub[k]);
			uint64_t x = member_get(elem, m);
			if (m.size == 8)
				st64(p, x);
			else
				st32(p, (uint32_t)x);
			p += m.size;
		}
	}
}

/* ---- encoding, into the writer's scratch buffer ---- */

struct enc {
	struct stream_writer *w;
	size_t len;
	const char *bad; /* why the frame cannot be written */
};

static uint8_t *
enc_grow(struct enc *e, size_t n)
{
	struct stream_writer *w = e->w;
	if (e->bad)
		return NULL;
	size_t cap = w->scratch_cap ? w->scratch_cap : 4096;
	while (cap < e->len + n)
		cap *= 2;
	uint8_t *p = realloc(w->scratch, cap);
	if (!p) {
		e->bad = "out of memory";
		return NULL;
	}
	w->scratch = p;
	w->scratch_cap = cap;
	p = w->scratch + e->len;
	e->len += n;
	return p;
}

/* n more bytes of the frame being encoded, or NULL once encoding failed. */
static inline uint8_t *
enc_room(struct enc *e, size_t n)
{
	if (e->bad || e->len + n > e->w->scratch_cap)
		return enc_grow(e, n);
	uint8_t *p = e->w->scratch + e->len;
	e->len += n;
	return p;
}

static inline void
put_scalar(struct enc *e, unsigned size, uint64_t v)
{
	uint8_t *p = enc_room(e, size);
	if (!p)
		return;
	switch (size) {
	case 1: *p = (uint8_t)v; break;
	case 2: st16(p, (uint16_t)v); break;
	case 4: st32(p, (uint32_t)v); break;
	default: st64(p, v); break;
	}
}

static void
put_bytes(struct enc *e, const void *src, size_t n)
{
	uint8_t *p = enc_room(e, n);
	if (p && n)
		memcpy(p, src, n);
}

/* Strings longer than the limit are cut, and so are they at a NUL byte: a name is never
 * worth a failed frame. */
static void
put_str(struct enc *e, struct str s)
{
	uint16_t n = s.len > STREAM_MAX_STR ? STREAM_MAX_STR : s.len;
	const char *nul = n ? memchr(s.p, 0, n) : NULL;
	if (nul)
		n = (uint16_t)(nul - s.p);
	put_scalar(e, 2, n);
	put_bytes(e, s.p, n);
}

static void
put_build_id(struct enc *e, uint8_t len, const uint8_t *id)
{
	uint8_t buf[STREAM_BUILD_ID_MAX] = { 0 };
	if (len > STREAM_BUILD_ID_MAX)
		len = STREAM_BUILD_ID_MAX;
	memcpy(buf, id, len);
	put_scalar(e, 1, len);
	put_bytes(e, buf, sizeof(buf));
}

static void put_fields(struct enc *e, const struct frame_field *fl, size_t n, const void *v);

static void
put_array(struct enc *e, const struct frame_field *fl, const void *v)
{
	uint64_t n = count_of(fl, v);
	if (n > fl->max) {
		e->bad = fl->write_too_many ? fl->write_too_many : fl->too_many;
		return;
	}
	if (fl->kind == FK_PACKED) {
		const uint8_t *p;
		memcpy(&p, cat(v, fl->off), sizeof(p));
		put_bytes(e, p, n * stream_elem_bytes(fl));
		return;
	}
	const uint8_t *el = cat(v, fl->off);
	uint8_t *p;
	switch (fl->elem) {
	case FK_U32:
		if ((p = enc_room(e, n * 4)))
			for (uint64_t i = 0; i < n; i++)
				st32(p + i * 4, ((const uint32_t *)el)[i]);
		break;
	case FK_U64:
		if ((p = enc_room(e, n * 8)))
			for (uint64_t i = 0; i < n; i++)
				st64(p + i * 8, ((const uint64_t *)el)[i]);
		break;
	default:
		for (uint64_t i = 0; i < n; i++)
			put_fields(e, fl->sub, fl->nsub, el + i * fl->stride);
	}
}

/* A group written only when its member is set is also written when a later one is. */
static int
group_written(const struct frame_field *fl, const struct frame_field *end, const void *v)
{
	for (; fl < end; fl++)
		if (fl->kind == FK_APPENDED && (!fl->when.size || member_get(v, fl->when)))
			return 1;
	return 0;
}

/* A scalar of 0 is written as its default (0 but for a few appended fields). */
static void
put_fields(struct enc *e, const struct frame_field *fl, size_t n, const void *v)
{
	const struct frame_field *end = fl + n;
	struct str s;
	uint8_t *p;

	for (; fl < end && !e->bad; fl++) {
		uint64_t x;
		switch (fl->kind) {
		case FK_U8:
		case FK_U16: {
			struct frame_member m = scalar(fl);
			x = member_get(v, m);
			put_scalar(e, m.size, x ? x : fl->dflt);
			break;
		}
		case FK_U32:
		case FK_I32: {
			uint32_t u;
			memcpy(&u, cat(v, fl->off), 4);
			if ((p = enc_room(e, 4)))
				st32(p, u ? u : (uint32_t)fl->dflt);
			break;
		}
		case FK_U64:
			memcpy(&x, cat(v, fl->off), 8);
			if ((p = enc_room(e, 8)))
				st64(p, x ? x : fl->dflt);
			break;
		case FK_STR:
			memcpy(&s, cat(v, fl->off), sizeof(s));
			put_str(e, s);
			break;
		case FK_BID:
			put_build_id(e, *(const uint8_t *)cat(v, fl->len_off), cat(v, fl->off));
			break;
		case FK_RESERVED:
			put_scalar(e, 4, 0);
			break;
		case FK_ARRAY:
		case FK_PACKED:
			put_array(e, fl, v);
			break;
		case FK_APPENDED:
			if (!group_written(fl, end, v))
				return;
			break;
		}
	}
}

/* The prefix of v (plan pl) at p. */
static void
put_prefix(uint8_t *p, const struct plan *pl, const void *v)
{
	memcpy(p, v, pl->bytes);
	for (size_t i = 0; i < 2 && pl->zero[i]; i++)
		memset(p + pl->zero[i] - 1, 0, 4);
}

/* Frame v of a type with a tail (plan pl): its prefix and the n elements of its tail, at p. */
static void
put_planned(uint8_t *p, const struct plan *pl, const void *v, uint64_t n)
{
	put_prefix(p, pl, v);
	memcpy(p + pl->bytes, cat(v, pl->tail->off), n * pl->tail_elem);
}

/* The elements of the tail of v (plan pl), or -1 when it has none or too many for it: the
 * walk then writes the frame, or says why not. */
static inline int64_t
tail_count(const struct plan *pl, const void *v)
{
	if (!pl->tail)
		return -1;
	uint64_t n = count_of(pl->tail, v);
	return n <= pl->tail->max ? (int64_t)n : -1;
}

const uint8_t *
stream_frame_encode(struct stream_writer *w, uint32_t type, const void *v, uint32_t *len)
{
	const struct plan *pl = plan_of(type);
	const struct frame_desc *d = pl->desc;
	struct enc e = { w, 0, NULL };
	int64_t n = tail_count(pl, v);
	uint8_t *p;

	if (!d)
		e.bad = "unknown frame type";
	else if (d->write_check)
		e.bad = d->write_check(v);
	if (!e.bad && n >= 0) {
		if ((p = enc_room(&e, pl->bytes + (size_t)n * pl->tail_elem)))
			put_planned(p, pl, v, (uint64_t)n);
	} else if (!e.bad) {
		if ((p = pl->bytes ? enc_room(&e, pl->bytes) : NULL))
			put_prefix(p, pl, v);
		put_fields(&e, d->fields + pl->fields, d->nfields - pl->fields, v);
	}
	if (e.bad) {
		snprintf(w->err, sizeof(w->err), "%s", e.bad);
		return NULL;
	}
	*len = (uint32_t)e.len;
	return w->scratch ? w->scratch : (const uint8_t *)"";
}

int
stream_put_frame(struct stream_writer *w, uint32_t type, const void *v)
{
	const struct plan *pl = plan_of(type);
	int64_t n = tail_count(pl, v);
	uint32_t len;
	uint8_t *room;

	/* A frame with a tail is encoded where it goes, in the output buffer, when it fits. */
	if (n >= 0 && (room = stream_frame_room(w, type, (uint32_t)(pl->bytes +
							      (size_t)n * pl->tail_elem)))) {
		put_planned(room, pl, v, (uint64_t)n);
		return 0;
	}
	const uint8_t *p = stream_frame_encode(w, type, v, &len);
	return p ? stream_write(w, type, p, len) : -1;
}

/* ---- decoding ---- */

struct dec {
	const uint8_t *p;
	size_t len, pos;
	const char *bad; /* first problem */
};

static inline const uint8_t *
take(struct dec *d, size_t n)
{
	if (d->bad)
		return NULL;
	if (d->len - d->pos < n) {
		d->bad = "frame too short";
		return NULL;
	}
	const uint8_t *p = d->p + d->pos;
	d->pos += n;
	return p;
}

static struct str
get_str(struct dec *d)
{
	struct str s = { "", 0 };
	const uint8_t *p = take(d, 2);
	uint16_t n = p ? ld16(p) : 0;
	if (n > STREAM_MAX_STR) {
		if (!d->bad)
			d->bad = "string longer than the limit";
		return s;
	}
	if (!(p = take(d, n)))
		return s;
	if (memchr(p, 0, n)) {
		d->bad = "NUL byte inside a string";
		return s;
	}
	s.p = (const char *)p;
	s.len = n;
	return s;
}

static void
get_build_id(struct dec *d, const struct frame_field *fl, void *v)
{
	const uint8_t *p = take(d, 1 + STREAM_BUILD_ID_MAX);
	if (!p)
		return;
	if (p[0] > STREAM_BUILD_ID_MAX) {
		d->bad = "build id longer than 20 bytes";
		return;
	}
	*(uint8_t *)at(v, fl->len_off) = p[0];
	memcpy(at(v, fl->off), p + 1, STREAM_BUILD_ID_MAX);
}

static void get_fields(struct dec *d, const struct frame_field *fl, size_t n, void *v);

/* Location ids that are there are checked before the length, so that a zero id is reported
 * as such even in a frame that also ends early. */
static void
get_nonzero_u32(struct dec *d, uint32_t *out, uint64_t n)
{
	size_t have = (d->len - d->pos) / 4, m = n < have ? n : have;
	const uint8_t *p = d->p + d->pos;
	uint32_t zero = 0;
	for (size_t i = 0; i < m; i++)
		zero |= !(out[i] = ld32(p + i * 4));
	if (zero)
		d->bad = "location id 0";
	else
		take(d, n * 4);
}

static void
check_elems(struct dec *d, const struct frame_field *fl, const uint8_t *p, uint64_t n)
{
	union { struct fr_bid bid; struct offcpu_span span; uint64_t word; } el;
	for (uint64_t i = 0; i < n && !d->bad; i++) {
		stream_elem_get(fl, p, i, &el);
		d->bad = fl->elem_check(&el);
	}
}

static void
get_array(struct dec *d, const struct frame_field *fl, void *v)
{
	uint64_t n = count_of(fl, v);
	if (n > fl->max) {
		d->bad = fl->too_many;
		return;
	}
	const uint8_t *p;
	if (fl->kind == FK_PACKED) {
		p = take(d, n * stream_elem_bytes(fl));
		memcpy(at(v, fl->off), &p, sizeof(p));
		if (p && fl->elem_check)
			check_elems(d, fl, p, n);
		return;
	}
	uint8_t *el = at(v, fl->off);
	switch (fl->elem) {
	case FK_U32:
		if (fl->nonzero)
			get_nonzero_u32(d, (uint32_t *)el, n);
		else if ((p = take(d, n * 4)))
			for (uint64_t i = 0; i < n; i++)
				((uint32_t *)el)[i] = ld32(p + i * 4);
		break;
	case FK_U64:
		if ((p = take(d, n * 8)))
			for (uint64_t i = 0; i < n; i++)
				((uint64_t *)el)[i] = ld64(p + i * 8);
		break;
	default:
		for (uint64_t i = 0; i < n && !d->bad; i++) {
			get_fields(d, fl->sub, fl->nsub, el + i * fl->stride);
			if (!d->bad && fl->elem_check)
				d->bad = fl->elem_check(el + i * fl->stride);
		}
	}
}

/* The fields of a group that is not there take their defaults, and so do the later ones. */
static void
set_defaults(const struct frame_field *fl, const struct frame_field *end, void *v)
{
	static const struct str empty = { "", 0 };
	static const uint8_t *const none = NULL;

	for (; fl < end; fl++) {
		switch (fl->kind) {
		case FK_STR: memcpy(at(v, fl->off), &empty, sizeof(empty)); break;
		case FK_BID: *(uint8_t *)at(v, fl->len_off) = 0; break;
		case FK_PACKED: memcpy(at(v, fl->off), &none, sizeof(none)); break;
		case FK_U8: case FK_U16: case FK_U32: case FK_U64: case FK_I32:
			stream_member_set(v, scalar(fl), fl->dflt);
			break;
		}
	}
}

/* Inside get_fields: a scalar member of its width, from the next bytes. */
#define GET_SCALAR(type, ld)                                                                 \
	if (rem < sizeof(type))                                                              \
		goto short_frame;                                                            \
	*(type *)at(v, fl->off) = ld(p);                                                     \
	d->pos += sizeof(type);                                                              \
	continue

/* Scalars are the bulk of every frame: each is one bounds check, one load and one store. */
static void
get_fields(struct dec *d, const struct frame_field *fl, size_t n, void *v)
{
	const struct frame_field *end = fl + n;
	struct str s;

	for (; fl < end; fl++) {
		const uint8_t *p = d->p + d->pos;
		size_t rem = d->len - d->pos;
		switch (fl->kind) {
		case FK_U8:
			GET_SCALAR(uint8_t, ld8);
		case FK_U16:
			GET_SCALAR(uint16_t, ld16);
		case FK_U32:
		case FK_I32:
			GET_SCALAR(uint32_t, ld32);
		case FK_U64:
			GET_SCALAR(uint64_t, ld64);
		case FK_RESERVED:
			if (rem < 4)
				goto short_frame;
			d->pos += 4;
			continue;
		case FK_STR:
			s = get_str(d);
			memcpy(at(v, fl->off), &s, sizeof(s));
			break;
		case FK_BID:
			get_build_id(d, fl, v);
			break;
		case FK_ARRAY:
		case FK_PACKED:
			get_array(d, fl, v);
			break;
		case FK_APPENDED:
			if (rem < fl->min_bytes) {
				set_defaults(fl, end, v);
				return;
			}
			break;
		case FK_RANGE:
			if (member_get(v, fl->a) < fl->lo || member_get(v, fl->a) > fl->hi)
				d->bad = fl->why;
			break;
		case FK_ORDERED:
			if (member_get(v, fl->b) < member_get(v, fl->a))
				d->bad = fl->why;
			break;
		case FK_CHECK:
			d->bad = fl->check(v);
			break;
		}
		if (d->bad)
			return;
	}
	return;
short_frame:
	d->bad = "frame too short";
}

/* A frame that failed leaves no count that its array does not hold. */
static void
clear_counts(const struct frame_desc *desc, void *v)
{
	for (size_t i = 0; i < desc->nfields; i++) {
		const struct frame_field *fl = &desc->fields[i];
		if (fl->kind == FK_ARRAY || fl->kind == FK_PACKED) {
			stream_member_set(v, fl->a, 0);
			if (fl->count != COUNT_A)
				stream_member_set(v, fl->b, 0);
		}
	}
}

/* Location ids are never 0; a frame's few are checked one by one. */
static int
has_zero(const uint32_t *el, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		if (!el[i])
			return 1;
	return 0;
}

/* The tail of a frame (plan pl) whole in it and within its limit is copied at once, its
 * location ids checked after; anything else is left to get_array, which says what is wrong. */
static void
get_tail(struct dec *d, const struct plan *pl, void *v)
{
	const struct frame_field *fl = pl->tail;
	uint64_t n = count_of(fl, v);
	size_t bytes = (size_t)n * pl->tail_elem;
	if (n > fl->max || d->len - d->pos < bytes) {
		get_array(d, fl, v);
		return;
	}
	uint32_t *el = at(v, fl->off);
	memcpy(el, d->p + d->pos, bytes);
	d->pos += bytes;
	if (fl->nonzero && has_zero(el, n))
		d->bad = "location id 0";
}

/* Decodes f with the row of type as: f must be of that type. */
static int
decode_as(const struct frame *f, uint32_t as, void *v, char *err, size_t errlen)
{
	const struct plan *pl = plan_of(as);
	const struct frame_desc *desc = pl->desc;
	struct dec d = { f->data, f->len, 0, NULL };

	if (f->type != as || !desc) {
		d.bad = "unexpected frame type";
	} else if (pl->bytes && f->len >= pl->bytes) {
		/* A frame shorter than its prefix is left to the walk, which says where it ends. */
		memcpy(v, f->data, pl->bytes);
		d.pos = pl->bytes;
		if (pl->tail)
			get_tail(&d, pl, v);
		else
			get_fields(&d, desc->fields + pl->fields, desc->nfields - pl->fields, v);
	} else {
		get_fields(&d, desc->fields, desc->nfields, v);
	}
	if (!d.bad)
		return 0;
	if (desc)
		clear_counts(desc, v);
	snprintf(err, errlen, "corrupt %s frame: %s", stream_frame_name(f->type), d.bad);
	return -1;
}

int
stream_get_frame(const struct frame *f, void *v, char *err, size_t errlen)
{
	return decode_as(f, f->type, v, err, errlen);
}

/* ---- the typed encoders and decoders of stream.h ---- */

#define TYPED(fn, st, type)                                                                 \
	int stream_put_##fn(struct stream_writer *w, const struct st *v)                    \
	{                                                                                   \
		return stream_put_frame(w, type, v);                                        \
	}                                                                                   \
	int stream_get_##fn(const struct frame *f, struct st *v, char *err, size_t errlen)  \
	{                                                                                   \
		return decode_as(f, type, v, err, errlen);                                  \
	}

TYPED(target, fr_target, FR_TARGET)
TYPED(mmap, fr_mmap, FR_MMAP)
TYPED(comm, fr_comm, FR_COMM)
TYPED(sample, fr_sample, FR_SAMPLE)
TYPED(lost, fr_lost, FR_LOST)
TYPED(ksym, fr_ksym, FR_KSYM)
TYPED(round, fr_round, FR_ROUND)
TYPED(target_exit, fr_target_exit, FR_TARGET_EXIT)
TYPED(end, fr_end, FR_END)
TYPED(warning, fr_warning, FR_WARNING)
TYPED(export, fr_export, FR_EXPORT)
TYPED(usym, fr_usym, FR_USYM)
TYPED(jit, fr_jit, FR_JIT)
TYPED(sample_regs, fr_sample_regs, FR_SAMPLE_REGS)
TYPED(offcpu, fr_offcpu, FR_OFFCPU)
TYPED(mapping, fr_mapping, FR_MAPPING)
TYPED(function, fr_function, FR_FUNCTION)
TYPED(location, fr_location, FR_LOCATION)
TYPED(stack, fr_stack, FR_STACK)
TYPED(offcpu_stack, fr_offcpu_stack, FR_OFFCPU_STACK)
TYPED(window_start, fr_window_start, FR_WINDOW_START)
TYPED(window_stack, fr_window_stack, FR_WINDOW_STACK)
TYPED(window_end, fr_window_end, FR_WINDOW_END)
TYPED(window_offcpu_stack, fr_window_stack, FR_WINDOW_OFFCPU_STACK)
TYPED(file, fr_file, FR_FILE)
TYPED(alloc, fr_alloc, FR_ALLOC)
TYPED(heap_free, fr_heap_free, FR_HEAP_FREE)
TYPED(heap_reset, fr_heap_reset, FR_HEAP_RESET)
TYPED(heap_stack, fr_heap_stack, FR_HEAP_STACK)
TYPED(window_heap_stack, fr_window_heap_stack, FR_WINDOW_HEAP_STACK)
TYPED(page_alloc, fr_page_alloc, FR_PAGE_ALLOC)
TYPED(page_free, fr_page_free, FR_PAGE_FREE)
TYPED(page_stack, fr_page_stack, FR_PAGE_STACK)
TYPED(window_page_stack, fr_window_page_stack, FR_WINDOW_PAGE_STACK)
TYPED(debuginfod, fr_debuginfod, FR_DEBUGINFOD)

/* Fork and exit share a layout; a fork frame carries no flags. */
int
stream_put_task(struct stream_writer *w, uint32_t type, const struct fr_task *v)
{
	struct fr_task t = *v;

	if (type != FR_EXIT)
		t.flags = 0;
	return stream_put_frame(w, type, &t);
}

int
stream_get_task(const struct frame *f, struct fr_task *v, char *err, size_t errlen)
{
	return decode_as(f, f->type == FR_EXIT ? FR_EXIT : FR_FORK, v, err, errlen);
}

/* Callers hand forget and modules their elements as arrays; the frame packs them. */
static int
put_packed(struct stream_writer *w, uint32_t type, void *v, const struct frame_field *fl,
	   const void *elems, size_t n, size_t elem_size)
{
	if (n > fl->max)
		return stream_put_frame(w, type, v); /* refused, with the row's reason */
	uint8_t *p = malloc(n * stream_elem_bytes(fl) + 1);
	if (!p) {
		snprintf(w->err, sizeof(w->err), "out of memory");
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		stream_elem_put(fl, p, i, (const char *)elems + i * elem_size);
	memcpy(at(v, fl->off), &p, sizeof(p));
	int rc = stream_put_frame(w, type, v);
	free(p);
	return rc;
}

/* The last field of a row: its array. */
static const struct frame_field *
last_field(uint32_t type)
{
	const struct frame_desc *d = stream_frame_desc(type);
	return &d->fields[d->nfields - 1];
}

int
stream_get_forget(const struct frame *f, struct fr_forget *v, char *err, size_t errlen)
{
	return decode_as(f, FR_FORGET, v, err, errlen);
}

int
stream_put_forget(struct stream_writer *w, const struct fr_forget *v, const uint32_t *ids)
{
	struct fr_forget g = *v;

	return put_packed(w, FR_FORGET, &g, last_field(FR_FORGET), ids, g.n, sizeof(*ids));
}

uint32_t
stream_forget_id(const struct fr_forget *v, uint32_t i)
{
	return ld32(v->ids + (size_t)i * 4);
}

int
stream_get_modules(const struct frame *f, struct fr_modules *v, char *err, size_t errlen)
{
	return decode_as(f, FR_MODULES, v, err, errlen);
}

int
stream_put_modules(struct stream_writer *w, uint32_t index, const struct fr_bid *ids,
		   uint16_t n)
{
	struct fr_modules m = { .index = index, .n = n };

	return put_packed(w, FR_MODULES, &m, last_field(FR_MODULES), ids, n, sizeof(*ids));
}

struct fr_bid
stream_module(const struct fr_modules *v, uint16_t i)
{
	struct fr_bid b;

	stream_elem_get(last_field(FR_MODULES), v->ids, i, &b);
	return b;
}

/* ---- off-CPU spans and stack-top words: records left packed in the frame ---- */

void
stream_span_pack(uint8_t *spans, uint32_t i, const struct offcpu_span *s)
{
	uint8_t *p = spans + (size_t)i * OFFCPU_SPAN_BYTES;
	st64(p, s->start);
	st64(p + 8, s->end);
	st32(p + 16, s->flags);
}

static struct offcpu_span
span_at(const uint8_t *spans, uint32_t i, uint32_t frame_flags)
{
	const uint8_t *p = spans + (size_t)i * OFFCPU_SPAN_BYTES;
	return (struct offcpu_span){ .start = ld64(p), .end = ld64(p + 8),
				     .flags = ld32(p + 16) | (frame_flags & ~OFFCPU_SPAN_FLAGS) };
}

struct offcpu_span
stream_span_unpack(const uint8_t *spans, uint32_t i)
{
	return span_at(spans, i, 0);
}

/* Interval i of a frame whose own interval is [start, end) with flags. */
static struct offcpu_span
frame_span(uint64_t start, uint64_t end, uint32_t flags, const uint8_t *more, uint32_t i)
{
	if (i == 0)
		return (struct offcpu_span){ start, end, flags };
	return span_at(more, i - 1, flags);
}

struct offcpu_span
stream_offcpu_span(const struct fr_offcpu *v, uint32_t i)
{
	return frame_span(v->start, v->end, v->flags, v->more, i);
}

struct offcpu_span
stream_offcpu_stack_span(const struct fr_offcpu_stack *v, uint32_t i)
{
	return frame_span(v->start, v->end, v->flags, v->more, i);
}

uint64_t
stream_offcpu_top(const struct fr_offcpu *v, uint32_t i, uint32_t w)
{
	return ld64(v->top + ((size_t)i * v->ntop + w) * 8);
}
