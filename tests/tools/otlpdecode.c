/*
 * otlpdecode: reads one ExportProfilesServiceRequest (a body as sent, not gzipped) with the
 * project's generated protobuf-c code, checks the rules of the format's dictionary and
 * samples, and prints it as lines for tests/otlp.bats:
 *
 *   resource KEY=VALUE                  each resource attribute
 *   profile N TYPE/UNIT samples=S total=T period=P/TYPE/UNIT timestamps=K id=HEX time=NS duration=NS
 *   sample N VALUE pid=P tid=T name=NAME stack=ADDR,ADDR,... leaf=FUNCTION
 *   point N TIMESTAMP VALUE             each timestamped value of a sample
 *
 * Rules (each broken one is a line "otlpdecode: RULE" and exit 1): every dictionary table
 * has its zero value at index 0; every index is inside its table; no string or stack is
 * there twice; a sample's attribute keys are distinct; values and timestamps, when both
 * set, have the same length; a profile id is 16 bytes, not all zero.
 *
 *   cc -I.output/gen tests/tools/otlpdecode.c .output/gen/libotlppb.a -lprotobuf-c
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opentelemetry/proto/collector/profiles/v1development/profiles_service.pb-c.h"

typedef Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceRequest Req;
typedef Opentelemetry__Proto__Profiles__V1development__ProfilesDictionary Dict;
typedef Opentelemetry__Proto__Profiles__V1development__Profile Profile;
typedef Opentelemetry__Proto__Profiles__V1development__Sample Sample;
typedef Opentelemetry__Proto__Common__V1__AnyValue Any;

static int bad;

#define RULE(cond, ...) \
	do { if (!(cond)) { fprintf(stderr, "otlpdecode: " __VA_ARGS__); fputc('\n', stderr); bad = 1; } } while (0)

static const char *
str(const Dict *d, int32_t i)
{
	return i >= 0 && (size_t)i < d->n_string_table ? d->string_table[i] : "?";
}

static void
check_zero(const Dict *d)
{
	RULE(d->n_string_table && !d->string_table[0][0], "string_table[0] is not \"\"");
	RULE(d->n_mapping_table && !d->mapping_table[0]->memory_start &&
	     !d->mapping_table[0]->memory_limit && !d->mapping_table[0]->file_offset &&
	     !d->mapping_table[0]->filename_strindex && !d->mapping_table[0]->n_attribute_indices,
	     "mapping_table[0] is not Mapping{}");
	RULE(d->n_location_table && !d->location_table[0]->mapping_index &&
	     !d->location_table[0]->address && !d->location_table[0]->n_lines &&
	     !d->location_table[0]->n_attribute_indices, "location_table[0] is not Location{}");
	RULE(d->n_function_table && !d->function_table[0]->name_strindex &&
	     !d->function_table[0]->system_name_strindex &&
	     !d->function_table[0]->filename_strindex && !d->function_table[0]->start_line,
	     "function_table[0] is not Function{}");
	RULE(d->n_stack_table && !d->stack_table[0]->n_location_indices,
	     "stack_table[0] is not Stack{}");
	RULE(d->n_attribute_table && !d->attribute_table[0]->key_strindex &&
	     !d->attribute_table[0]->unit_strindex &&
	     (!d->attribute_table[0]->value ||
	      d->attribute_table[0]->value->value_case == 0), "attribute_table[0] is not empty");
	if (d->n_link_table) {
		const Opentelemetry__Proto__Profiles__V1development__Link *l = d->link_table[0];
		int zero = 1;
		for (size_t i = 0; i < l->trace_id.len; i++)
			zero &= !l->trace_id.data[i];
		for (size_t i = 0; i < l->span_id.len; i++)
			zero &= !l->span_id.data[i];
		RULE(zero, "link_table[0] has non-zero ids");
	} else {
		RULE(0, "link_table is empty");
	}
}

#define IN(i, n) ((i) >= 0 && (size_t)(i) < (n))

static const Dict *sort_dict;

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(sort_dict->string_table[*(const size_t *)a],
		      sort_dict->string_table[*(const size_t *)b]);
}

static int
cmp_stack(const void *a, const void *b)
{
	const Opentelemetry__Proto__Profiles__V1development__Stack *x =
		sort_dict->stack_table[*(const size_t *)a], *y = sort_dict->stack_table[*(const size_t *)b];

	if (x->n_location_indices != y->n_location_indices)
		return x->n_location_indices < y->n_location_indices ? -1 : 1;
	return memcmp(x->location_indices, y->location_indices,
		      x->n_location_indices * sizeof(int32_t));
}

/* No string and no stack twice: sorted, equal neighbours would show. */
static void
dup_check(const Dict *d)
{
	size_t n = d->n_string_table > d->n_stack_table ? d->n_string_table : d->n_stack_table;
	size_t *ix = calloc(n + 1, sizeof(*ix));

	sort_dict = d;
	for (size_t i = 0; i < d->n_string_table; i++)
		ix[i] = i;
	qsort(ix, d->n_string_table, sizeof(*ix), cmp_str);
	for (size_t i = 1; i < d->n_string_table; i++)
		RULE(cmp_str(&ix[i - 1], &ix[i]), "string '%s' is there twice",
		     d->string_table[ix[i]]);
	for (size_t i = 0; i < d->n_stack_table; i++)
		ix[i] = i;
	qsort(ix, d->n_stack_table, sizeof(*ix), cmp_stack);
	for (size_t i = 1; i < d->n_stack_table; i++)
		RULE(cmp_stack(&ix[i - 1], &ix[i]), "stack %zu is there twice", ix[i]);
	free(ix);
}

static void
check_indices(const Dict *d)
{
	for (size_t i = 0; i < d->n_mapping_table; i++)
		RULE(IN(d->mapping_table[i]->filename_strindex, d->n_string_table),
		     "mapping %zu: filename outside string_table", i);
	for (size_t i = 0; i < d->n_location_table; i++) {
		const Opentelemetry__Proto__Profiles__V1development__Location *l = d->location_table[i];
		RULE(IN(l->mapping_index, d->n_mapping_table), "location %zu: bad mapping", i);
		for (size_t j = 0; j < l->n_lines; j++)
			RULE(IN(l->lines[j]->function_index, d->n_function_table),
			     "location %zu: bad function", i);
		for (size_t j = 0; j < l->n_attribute_indices; j++)
			RULE(IN(l->attribute_indices[j], d->n_attribute_table),
			     "location %zu: bad attribute", i);
	}
	for (size_t i = 0; i < d->n_function_table; i++) {
		const Opentelemetry__Proto__Profiles__V1development__Function *f = d->function_table[i];
		RULE(IN(f->name_strindex, d->n_string_table) &&
		     IN(f->system_name_strindex, d->n_string_table) &&
		     IN(f->filename_strindex, d->n_string_table), "function %zu: bad string", i);
		RULE(i == 0 || f->name_strindex || f->system_name_strindex || f->filename_strindex,
		     "function %zu: no name, system name or file", i);
	}
	for (size_t i = 0; i < d->n_stack_table; i++)
		for (size_t j = 0; j < d->stack_table[i]->n_location_indices; j++)
			RULE(IN(d->stack_table[i]->location_indices[j], d->n_location_table),
			     "stack %zu: bad location", i);
	for (size_t i = 0; i < d->n_attribute_table; i++)
		RULE(IN(d->attribute_table[i]->key_strindex, d->n_string_table),
		     "attribute %zu: bad key", i);
	dup_check(d);
}

static void
print_any(const Any *v)
{
	if (!v)
		printf("(none)");
	else if (v->value_case == OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_STRING_VALUE)
		printf("%s", v->string_value);
	else if (v->value_case == OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_INT_VALUE)
		printf("%" PRId64, v->int_value);
	else if (v->value_case == OPENTELEMETRY__PROTO__COMMON__V1__ANY_VALUE__VALUE_BOOL_VALUE)
		printf("%s", v->bool_value ? "true" : "false");
	else
		printf("(kind %d)", (int)v->value_case);
}

static void
print_sample(const Dict *d, size_t k, const Sample *s)
{
	int64_t sum = 0;

	RULE(IN(s->stack_index, d->n_stack_table), "profile %zu: sample stack outside", k);
	RULE(IN(s->link_index, d->n_link_table), "profile %zu: sample link outside", k);
	RULE(s->n_values || s->n_timestamps_unix_nano, "profile %zu: a sample without values", k);
	RULE(!s->n_values || !s->n_timestamps_unix_nano ||
	     s->n_values == s->n_timestamps_unix_nano,
	     "profile %zu: values and timestamps of different lengths", k);
	for (size_t i = 0; i < s->n_values; i++)
		sum += s->values[i];
	if (!s->n_values)
		sum = (int64_t)s->n_timestamps_unix_nano;
	printf("sample %zu %" PRId64, k, sum);
	for (size_t i = 0; i < s->n_attribute_indices; i++) {
		int32_t a = s->attribute_indices[i];

		RULE(IN(a, d->n_attribute_table), "profile %zu: sample attribute outside", k);
		if (!IN(a, d->n_attribute_table))
			return;
		for (size_t j = 0; j < i; j++)
			RULE(d->attribute_table[s->attribute_indices[j]]->key_strindex !=
				     d->attribute_table[a]->key_strindex,
			     "profile %zu: a sample repeats attribute key %s", k,
			     str(d, d->attribute_table[a]->key_strindex));
		printf(" %s=", str(d, d->attribute_table[a]->key_strindex));
		print_any(d->attribute_table[a]->value);
	}
	if (!IN(s->stack_index, d->n_stack_table))
		return;
	const Opentelemetry__Proto__Profiles__V1development__Stack *st = d->stack_table[s->stack_index];
	printf(" stack=");
	for (size_t i = 0; i < st->n_location_indices; i++)
		printf("%s0x%" PRIx64, i ? "," : "", d->location_table[st->location_indices[i]]->address);
	const char *leaf = "-";
	if (st->n_location_indices) {
		const Opentelemetry__Proto__Profiles__V1development__Location *l =
			d->location_table[st->location_indices[0]];
		if (l->n_lines)
			leaf = str(d, d->function_table[l->lines[0]->function_index]->name_strindex);
	}
	printf(" leaf=%s\n", leaf[0] ? leaf : "-");
	for (size_t i = 0; i < s->n_timestamps_unix_nano; i++)
		printf("point %zu %" PRIu64 " %" PRId64 "\n", k, s->timestamps_unix_nano[i],
		       i < s->n_values ? s->values[i] : 1);
}

static void
print_profile(const Dict *d, size_t k, const Profile *p)
{
	int64_t total = 0;
	size_t ts = 0;
	int zero = 1;

	for (size_t i = 0; i < p->profile_id.len; i++)
		zero &= !p->profile_id.data[i];
	RULE(p->profile_id.len == 16 && !zero, "profile %zu: id not 16 bytes or all zero", k);
	RULE(p->sample_type, "profile %zu: no sample type", k);
	for (size_t i = 0; i < p->n_samples; i++) {
		for (size_t j = 0; j < p->samples[i]->n_values; j++)
			total += p->samples[i]->values[j];
		ts += p->samples[i]->n_timestamps_unix_nano;
	}
	printf("profile %zu %s/%s samples=%zu total=%" PRId64 " period=%" PRId64 "/%s/%s"
	       " timestamps=%zu id=", k,
	       p->sample_type ? str(d, p->sample_type->type_strindex) : "?",
	       p->sample_type ? str(d, p->sample_type->unit_strindex) : "?", p->n_samples, total,
	       p->period, p->period_type ? str(d, p->period_type->type_strindex) : "-",
	       p->period_type ? str(d, p->period_type->unit_strindex) : "-", ts);
	for (size_t i = 0; i < p->profile_id.len; i++)
		printf("%02x", p->profile_id.data[i]);
	printf(" time=%" PRIu64 " duration=%" PRIu64 "\n", p->time_unix_nano, p->duration_nano);
	for (size_t i = 0; i < p->n_samples; i++)
		print_sample(d, k, p->samples[i]);
}

int
main(void)
{
	static uint8_t buf[256 << 20];
	size_t n = fread(buf, 1, sizeof(buf), stdin), k = 0;
	Req *r = opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__unpack(NULL, n, buf);

	if (!r) {
		fprintf(stderr, "otlpdecode: not an ExportProfilesServiceRequest\n");
		return 1;
	}
	RULE(r->dictionary, "no dictionary");
	if (!r->dictionary)
		return 1;
	check_zero(r->dictionary);
	check_indices(r->dictionary);
	for (size_t i = 0; i < r->n_resource_profiles; i++) {
		const Opentelemetry__Proto__Profiles__V1development__ResourceProfiles *rp = r->resource_profiles[i];
		for (size_t j = 0; rp->resource && j < rp->resource->n_attributes; j++) {
			printf("resource %s=", rp->resource->attributes[j]->key);
			print_any(rp->resource->attributes[j]->value);
			printf("\n");
		}
		for (size_t j = 0; j < rp->n_scope_profiles; j++)
			for (size_t m = 0; m < rp->scope_profiles[j]->n_profiles; m++)
				print_profile(r->dictionary, k++, rp->scope_profiles[j]->profiles[m]);
	}
	return bad;
}
