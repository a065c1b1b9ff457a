/* Unit tests of emit-otlp's encoder (emit-otlp/encode.c, dict.c): a source of any number
 * of sample types (a heap-like one of four here) becomes that many Profiles over one
 * dictionary, whose tables start with their zero values and hold each string and stack
 * once; the timeline's samples outside the window are counted, not sent. */
#include <stdlib.h>
#include <string.h>

#include "encode.h"
#include "pbtypes.h"

#include "check.h"

#define REQ_FN(f) \
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__##f

static struct str
S(const char *s)
{
	return (struct str){ s, (uint16_t)strlen(s) };
}

static void
define(struct defs *d)
{
	struct fr_mapping exe = { .id = 1, .pid = 7, .start = 0x400000, .limit = 0x500000,
				  .build_id_len = 2, .build_id = { 0xab, 0xcd }, .path = S("/bin/app") };
	struct fr_mapping k = { .id = 2, .flags = MAPPING_KERNEL, .start = 0xffff0000,
				.limit = 0xffffffff, .path = S("[kernel.kallsyms]") };
	const char *names[] = { "main", "work", "schedule" };

	CHECK(defs_add_mapping(d, &exe) == 0 && defs_add_mapping(d, &k) == 0);
	for (uint32_t i = 0; i < 3; i++) {
		struct fr_function f = { .id = i + 1, .name = S(names[i]), .filename = S("app.c") };
		CHECK(defs_add_function(d, &f) == 0);
	}
	for (uint32_t i = 0; i < 3; i++) {
		struct fr_location l = { .id = 10 + i, .mapping_id = i == 2 ? 2 : 1,
					 .address = i == 2 ? 0xffff0010 : 0x401000 + i, .nlines = 1 };
		l.lines[0] = (struct fr_line){ i == 0 ? 2 : i == 1 ? 1 : 3, 5 + i };
		CHECK(defs_add_location(d, &l) == 0);
	}
	struct fr_comm c = { .pid = 7, .tid = 8, .comm = S("worker") };
	CHECK(defs_set_comm(d, &c) == 0);
}

static uint64_t
heap_value(const struct wstack *s, unsigned i)
{
	return s->count * (i + 1);
}

/* The window's stacks: two threads on the same locations, one more with a kernel leaf. */
static void
stacks(struct winmodel *wm)
{
	struct fr_window_stack ws = { .pid = 7, .tid = 7, .count = 3, .nanos = 30, .nlocs = 2,
				      .locs = { 10, 11 } };

	winmodel_begin(wm, 0, 0);
	CHECK(winmodel_stack(wm, 0, &ws) == 0);
	ws.tid = 8, ws.count = 5;
	CHECK(winmodel_stack(wm, 0, &ws) == 0);
	ws = (struct fr_window_stack){ .pid = 7, .tid = 8, .count = 1, .nlocs = 3,
				       .locs = { 12, 10, 11 } };
	CHECK(winmodel_stack(wm, 0, &ws) == 0);
}

static void
check_dictionary(const OtDictionary *d)
{
	CHECK(d->n_string_table > 1 && !strcmp(d->string_table[0], ""));
	for (size_t i = 1; i < d->n_string_table; i++)
		for (size_t j = 0; j < i; j++)
			CHECK(strcmp(d->string_table[i], d->string_table[j]) != 0);
	CHECK(d->n_mapping_table == 3 && !d->mapping_table[0]->memory_start);
	CHECK(d->n_location_table == 4 && !d->location_table[0]->n_lines);
	CHECK(d->n_function_table == 4 && !d->function_table[0]->name_strindex);
	/* [0] empty, [10,11] once for both threads and the timeline, [12,10,11] */
	CHECK(d->n_stack_table == 3 && !d->stack_table[0]->n_location_indices);
	CHECK(d->n_link_table == 1 && d->link_table[0]->trace_id.len == 16);
	CHECK(d->n_attribute_table > 1 && !d->attribute_table[0]->key_strindex);
}

int
main(void)
{
	struct defs d;
	struct winmodel wm;
	struct timeline tl;
	struct encoder e;
	OtResource res = OT_RESOURCE_INIT;
	OtScope scope = OT_SCOPE_INIT;
	uint8_t *buf;
	size_t len;

	defs_init(&d);
	define(&d);
	winmodel_init(&wm, &d);
	stacks(&wm);
	timeline_init(&tl, 16);
	/* one sample inside [1000, 2000), one before it, one at its end */
	struct fr_stack st = { .time = 1500, .pid = 7, .tid = 8, .period = 10, .nlocs = 2,
			       .locs = { 10, 11 } };
	CHECK(timeline_add(&tl, &st) == 0);
	st.time = 999;
	CHECK(timeline_add(&tl, &st) == 0);
	st.time = 2000;
	CHECK(timeline_add(&tl, &st) == 0);
	struct encode_source src = {
		.set = &wm.cpu, .nvalues = 4,
		.vt = { { "alloc_objects", "count" }, { "alloc_space", "bytes" },
			{ "inuse_objects", "count" }, { "inuse_space", "bytes" } },
		.value = heap_value, .period_type = { "space", "bytes" }, .period = 524288,
	};
	struct encode_window w = { .src = &src, .nsrc = 1, .tl = &tl, .tl_period = 10,
				   .start = 1000, .end = 2000, .clock_offset_ns = 1000000,
				   .resource = &res, .scope = &scope };
	encoder_init(&e, &d);
	CHECK(encoder_run(&e, &w, &buf, &len) == 0);
	CHECK(e.tl_samples == 1 && e.tl_errors == 2);
	OtRequest *r = REQ_FN(unpack)(NULL, len, buf);
	CHECK(r && r->dictionary && r->n_resource_profiles == 1);
	if (r && r->dictionary) {
		OtScopeProfiles *sp = r->resource_profiles[0]->scope_profiles[0];
		check_dictionary(r->dictionary);
		CHECK(sp->n_profiles == 5);
		for (size_t i = 0; i < 4 && sp->n_profiles == 5; i++) {
			OtProfile *p = sp->profiles[i];
			CHECK(p->n_samples == 3 && p->samples[1]->values[0] == (int64_t)(5 * (i + 1)));
			CHECK(p->period == 524288 && p->time_unix_nano == 1001000 &&
			      p->duration_nano == 1000 && p->profile_id.len == 16);
			CHECK(memcmp(p->profile_id.data, sp->profiles[4]->profile_id.data, 16) != 0);
		}
		OtProfile *t = sp->n_profiles == 5 ? sp->profiles[4] : NULL;
		CHECK(t && t->n_samples == 1 && t->samples[0]->n_timestamps_unix_nano == 1 &&
		      t->samples[0]->timestamps_unix_nano[0] == 1001500 &&
		      t->samples[0]->values[0] == 10);
		REQ_FN(free_unpacked)(r, NULL);
	}
	free(buf);
	encoder_release(&e);
	timeline_release(&tl);
	winmodel_release(&wm);
	defs_release(&d);
	printf("otlp_encode_test: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
