/* Unit tests of the frame table: every frame type, filled field by field from its row, goes
 * through the encoder and back through the decoder unchanged; so do its text form and its
 * typed wrapper.  A frame cut short is corrupt except where an appended group begins, and
 * bytes after the known fields are ignored. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frametab.h"
#include "frametext.h"

#include "check.h"

static union stream_any_frame in, out;
static uint8_t packed[4][4096]; /* the packed arrays of one frame */
static int npacked;
static struct stream_writer w; /* its encoding buffer only */

static const char *const names[] = { "alpha", "b", "c.d", "e_f", "g-h", "ij" };

/* Member values grow with the field, so that every end comes after its start. */
static void
fill_scalar(const struct frame_field *fl, void *v, uint64_t k)
{
	struct frame_member m = stream_field_member(fl);
	stream_member_set(v, m, m.size == 1 ? 0x40 + k % 64 : 1000 + 7 * k);
}

static void
fill_str(const struct frame_field *fl, void *v, uint64_t k)
{
	const char *s = names[k % (sizeof(names) / sizeof(names[0]))];
	struct str x = { s, (uint16_t)strlen(s) };
	memcpy((char *)v + fl->off, &x, sizeof(x));
}

static void
fill_elem(const struct frame_field *fl, void *el, uint64_t k)
{
	struct fr_bid *b = el;

	switch (fl->elem) {
	case FK_U8: *(uint8_t *)el = (uint8_t)(k * 37); break;
	case FK_U32: *(uint32_t *)el = (uint32_t)(100 + k); break;
	case FK_U64: *(uint64_t *)el = 0x7f0000001000ull + k; break;
	case FK_BID:
		*b = (struct fr_bid){ .len = (uint8_t)(1 + k % 20) };
		for (uint8_t i = 0; i < b->len; i++)
			b->id[i] = (uint8_t)(k + i);
		break;
	default:
		for (uint8_t i = 0; i < fl->nsub; i++)
			(fl->sub[i].kind == FK_STR ? fill_str : fill_scalar)(&fl->sub[i], el, k * 4 + i);
	}
}

/* Every field set, three elements an array (counts follow), all by the row. */
static void
fill(const struct frame_desc *d, void *v)
{
	memset(v, 0, d->size);
	npacked = 0;
	for (size_t i = 0; i < d->nfields; i++) {
		const struct frame_field *fl = &d->fields[i];
		switch (fl->kind) {
		case FK_STR: fill_str(fl, v, i); break;
		case FK_BID:
			*((uint8_t *)v + fl->len_off) = 3;
			memcpy((uint8_t *)v + fl->off, "\x12\x34\x56", 3);
			break;
		case FK_U8: case FK_U16: case FK_U32: case FK_U64: case FK_I32:
			fill_scalar(fl, v, i);
			break;
		}
	}
	for (size_t i = 0; i < d->nfields; i++) {
		const struct frame_field *fl = &d->fields[i];
		if (fl->kind != FK_ARRAY && fl->kind != FK_PACKED)
			continue;
		if (fl->count != COUNT_SPANS)
			stream_member_set(v, fl->a, fl->count == COUNT_SUM ? 1 : 3);
		if (fl->count != COUNT_A)
			stream_member_set(v, fl->b, 2);
		uint64_t n = stream_field_count(fl, v);
		union { uint8_t b[64]; uint64_t align; } el;
		for (uint64_t k = 0; k < n; k++) {
			if (fl->kind == FK_ARRAY) {
				fill_elem(fl, (char *)v + fl->off + k * fl->stride, k);
				continue;
			}
			memset(&el, 0, sizeof(el));
			fill_elem(fl, &el, k);
			stream_elem_put(fl, packed[npacked], k, &el);
		}
		if (fl->kind == FK_PACKED) {
			uint8_t *p = packed[npacked++];
			memcpy((char *)v + fl->off, &p, sizeof(p));
		}
	}
}

/* What a row's rules want beyond what fill gives (docs/stream-format.md). */
static void
fix_rules(uint32_t type, union stream_any_frame *v, int variant)
{
	switch (type) {
	case FR_TARGET:
		v->target.offcpu_percent = 50;
		v->target.physical_percent = 10;
		break;
	case FR_SAMPLE_REGS:
		v->sample_regs.reg_mask = 0x1c0; /* three registers */
		break;
	case FR_OFFCPU:
		v->offcpu.phase = PHASE_PREEMPTED;
		if (variant) { /* a stack copy goes with one interval only */
			v->offcpu.nmore = 0;
			v->offcpu.more = NULL;
		} else { /* sp and bp go with a stack copy */
			v->offcpu.nstack = 0;
			v->offcpu.sp = v->offcpu.bp = 0;
		}
		for (uint32_t i = 0; i < v->offcpu.nmore; i++)
			stream_span_pack((uint8_t *)v->offcpu.more, i,
					 &(struct offcpu_span){ 10 * i, 10 * i + 5, OFFCPU_CONTINUES });
		break;
	case FR_ALLOC:
		v->alloc.weight = 4;              /* a power of two */
		v->alloc.reg_mask = 0x1c0;        /* three registers */
		break;
	case FR_HEAP_STACK:
		v->heap_stack.weight = 1024;
		break;
	case FR_HEAP_RESET:
		v->heap_reset.reason = HEAP_RESET_REATTACH;
		break;
	case FR_PAGE_ALLOC:     /* orders go up to the kernel's largest */
		v->page_alloc.order = STREAM_MAX_PAGE_ORDER;
		break;
	case FR_PAGE_FREE:
		v->page_free.order = 3;
		break;
	case FR_PAGE_STACK:
		v->page_stack.order = 0;
		break;
	case FR_EXPORT:
		v->export_.status = 3;  /* partial */
		break;
	case FR_DEBUGINFOD:     /* the five outcomes add up to the modules queried */
		v->debuginfod.queried = v->debuginfod.fetched + v->debuginfod.not_found +
					v->debuginfod.failed + v->debuginfod.out_of_time +
					v->debuginfod.oversized;
		v->debuginfod.requests = v->debuginfod.queried - v->debuginfod.out_of_time;
		break;
	case FR_OFFCPU_STACK:
		v->offcpu_stack.phase = PHASE_BLOCKED;
		for (uint32_t i = 0; i < v->offcpu_stack.nmore; i++)
			stream_span_pack((uint8_t *)v->offcpu_stack.more, i,
					 &(struct offcpu_span){ 10 * i, 10 * i + 5, 0 });
		break;
	}
}

static int
same_elems(const struct frame_field *fl, const void *a, const void *b, uint64_t n)
{
	const uint8_t *pa, *pb;

	if (fl->kind == FK_PACKED) {
		memcpy(&pa, (const char *)a + fl->off, sizeof(pa));
		memcpy(&pb, (const char *)b + fl->off, sizeof(pb));
		return n == 0 || !memcmp(pa, pb, n * stream_elem_bytes(fl));
	}
	for (uint64_t k = 0; k < n; k++) {
		const char *ea = (const char *)a + fl->off + k * fl->stride;
		const char *eb = (const char *)b + fl->off + k * fl->stride;
		for (uint8_t i = 0; fl->elem == FK_REC && i < fl->nsub; i++) {
			const struct frame_field *s = &fl->sub[i];
			struct str x, y;
			if (s->kind != FK_STR && stream_member_get(ea, stream_field_member(s)) !=
			    stream_member_get(eb, stream_field_member(s)))
				return 0;
			memcpy(&x, ea + s->off, sizeof(x));
			memcpy(&y, eb + s->off, sizeof(y));
			if (s->kind == FK_STR && (x.len != y.len || memcmp(x.p, y.p, x.len)))
				return 0;
		}
		if (fl->elem != FK_REC && memcmp(ea, eb, fl->stride))
			return 0;
	}
	return 1;
}

/* Field by field, by the row: the name of the first that differs, or NULL. */
static const char *
differs(const struct frame_desc *d, const void *a, const void *b)
{
	for (size_t i = 0; i < d->nfields; i++) {
		const struct frame_field *fl = &d->fields[i];
		struct str x, y;
		switch (fl->kind) {
		case FK_STR:
			memcpy(&x, (const char *)a + fl->off, sizeof(x));
			memcpy(&y, (const char *)b + fl->off, sizeof(y));
			if (x.len != y.len || memcmp(x.p, y.p, x.len))
				return fl->name;
			break;
		case FK_BID:
			if (*((const uint8_t *)a + fl->len_off) != *((const uint8_t *)b + fl->len_off) ||
			    memcmp((const char *)a + fl->off, (const char *)b + fl->off,
				   *((const uint8_t *)a + fl->len_off)))
				return fl->name;
			break;
		case FK_ARRAY:
		case FK_PACKED:
			if (!same_elems(fl, a, b, stream_field_count(fl, a)))
				return fl->name;
			break;
		case FK_U8: case FK_U16: case FK_U32: case FK_U64: case FK_I32:
			if (stream_member_get(a, stream_field_member(fl)) !=
			    stream_member_get(b, stream_field_member(fl)))
				return fl->name;
			break;
		}
	}
	return NULL;
}

static void
test_type(const struct frame_desc *d, int variant)
{
	char err[200];
	uint32_t n, m;
	const uint8_t *p;
	static uint8_t bytes[1 << 16];

	fill(d, &in);
	fix_rules(d->type, &in, variant);
	p = stream_frame_encode(&w, d->type, &in, &n);
	CHECK(p != NULL);
	if (!p) {
		fprintf(stderr, "%s: %s\n", d->name, w.err);
		return;
	}
	memcpy(bytes, p, n);
	struct frame f = { d->type, n, bytes };
	CHECK(stream_get_frame(&f, &out, err, sizeof(err)) == 0);
	const char *which = differs(d, &in, &out);
	CHECK(which == NULL);
	if (which)
		fprintf(stderr, "%s: field %s does not come back\n", d->name, which);
	/* The decoded frame encodes into the same bytes. */
	CHECK((p = stream_frame_encode(&w, d->type, &out, &m)) && m == n && !memcmp(p, bytes, n));
	/* Bytes after the known fields are ignored. */
	memcpy(bytes + n, "\x01\x02\x03", 3);
	f.len = n + 3;
	CHECK(stream_get_frame(&f, &out, err, sizeof(err)) == 0 && !differs(d, &in, &out));
	/* Cut anywhere, it is corrupt, unless the cut leaves out whole appended groups (an
	 * older writer's frame) or fewer bytes than a group needs to be there. */
	int reads = 0, groups = 0, slack = 0;
	for (uint32_t cut = 0; cut < n; cut++) {
		struct frame c = { d->type, cut, bytes };
		reads += stream_get_frame(&c, &out, err, sizeof(err)) == 0;
	}
	for (size_t i = 0; i < d->nfields; i++) {
		groups += d->fields[i].kind == FK_APPENDED;
		slack += d->fields[i].kind == FK_APPENDED ? d->fields[i].min_bytes : 0;
	}
	CHECK(groups ? reads >= 1 && reads <= slack : reads == 0);
	/* Its text packs back into the same bytes, and the typed wrapper writes them too. */
	char *line = NULL;
	size_t len = 0;
	FILE *text = open_memstream(&line, &len);
	f.len = n;
	CHECK(stream_frame_print(text, &f) == 0 && fclose(text) == 0);
	CHECK(strncmp(line, d->name, strlen(d->name)) == 0 && line[strlen(d->name)] == ' ');
	struct stream_writer again = { 0 };
	again.cap = sizeof(bytes);
	again.buf = malloc(again.cap);
	again.fd = -1;
	CHECK(stream_frame_pack(&again, line, err, sizeof(err)) == 1);
	CHECK(again.len == 8 + n && !memcmp(again.buf + 8, bytes, n));
	free(line);
	again.len = 0;
	CHECK(stream_put_frame(&again, d->type, &in) == 0 && again.len == 8 + n &&
	      !memcmp(again.buf + 8, bytes, n));
	stream_writer_release(&again);
}

/* The rules the encoder checks itself: counts over their limits are refused. */
static void
test_write_limits(void)
{
	static struct fr_stack s;
	static struct fr_offcpu o;
	uint32_t n;

	s.nlocs = STREAM_MAX_LOCS + 1;
	CHECK(stream_frame_encode(&w, FR_STACK, &s, &n) == NULL && strstr(w.err, "locations"));
	o = (struct fr_offcpu){ .phase = PHASE_BLOCKED, .nstack = 8, .ntop = 0 };
	CHECK(stream_frame_encode(&w, FR_OFFCPU, &o, &n) == NULL && strstr(w.err, "stack copy"));
	CHECK(stream_frame_encode(&w, 999, &s, &n) == NULL);
	/* debuginfod counts are read only when their outcomes add up, without wrapping. */
	struct fr_debuginfod d = { 2, 2, 1, 0, 0, 0, 0, 10 }, back;
	const uint8_t *p = stream_frame_encode(&w, FR_DEBUGINFOD, &d, &n);
	char err[200];
	CHECK(p && stream_get_frame(&(struct frame){ FR_DEBUGINFOD, n, p }, &back, err,
				    sizeof(err)) < 0 && strstr(err, "do not add up"));
	d = (struct fr_debuginfod){ 1, 1, UINT64_MAX, 2, 0, 0, 0, 0 };
	p = stream_frame_encode(&w, FR_DEBUGINFOD, &d, &n);
	CHECK(p && stream_get_frame(&(struct frame){ FR_DEBUGINFOD, n, p }, &back, err,
				    sizeof(err)) < 0 && strstr(err, "do not add up"));
	d = (struct fr_debuginfod){ 1, 2, 1, 0, 0, 0, 0, 0 };
	p = stream_frame_encode(&w, FR_DEBUGINFOD, &d, &n);
	CHECK(p && stream_get_frame(&(struct frame){ FR_DEBUGINFOD, n, p }, &back, err,
				    sizeof(err)) < 0 && strstr(err, "more debuginfod fetches"));
	CHECK(stream_frame_desc(999) == NULL && stream_frame_desc(0) == NULL);
}

int
main(void)
{
	int types = 0;

	for (uint32_t t = 0; t < stream_frame_types(); t++) {
		const struct frame_desc *d = stream_frame_desc(t);
		if (!d)
			continue;
		CHECK(d->type == t && !strcmp(stream_frame_name(t), d->name));
		test_type(d, 0);
		if (t == FR_OFFCPU)
			test_type(d, 1);
		types++;
	}
	CHECK(types == 39);
	test_write_limits();
	stream_writer_release(&w);
	printf("frametab: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
