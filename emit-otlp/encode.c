#include "encode.h"

#include <openssl/rand.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "stream.h"

#define REQUEST_FN(f) \
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_request__##f

void
encoder_init(struct encoder *e, const struct defs *defs)
{
	memset(e, 0, sizeof(*e));
	dict_init(&e->d, defs);
}

void
encoder_release(struct encoder *e)
{
	dict_release(&e->d);
	free(e->es);
	free(e->vals);
	free(e->ts);
	free(e->pts);
	free(e->samples);
	free(e->psamples);
	encoder_init(e, e->d.defs);
}

static int
fail(struct encoder *e, const char *why)
{
	snprintf(e->err, sizeof(e->err), "%s", why ? why : e->d.err);
	return -1;
}

/* process.pid, thread.id and thread.name (when the thread has one) of a sample. */
static int
sample_attrs(struct encoder *e, uint32_t pid, uint32_t tid, int32_t *out, uint32_t *n)
{
	const struct pstr *name = defs_comm(e->d.defs, tid);

	if (!e->k_pid && ((e->k_pid = dict_cstr(&e->d, "process.pid")) < 0 ||
			  (e->k_tid = dict_cstr(&e->d, "thread.id")) < 0 ||
			  (e->k_tname = dict_cstr(&e->d, "thread.name")) < 0))
		return -1;
	*n = 0;
	if ((out[(*n)++] = dict_attr_int(&e->d, e->k_pid, pid)) < 0 ||
	    (out[(*n)++] = dict_attr_int(&e->d, e->k_tid, tid)) < 0)
		return -1;
	if (name && name->len &&
	    (out[(*n)++] = dict_attr_str(&e->d, e->k_tname, defs_str(e->d.defs, *name),
					 name->len)) < 0)
		return -1;
	return 0;
}

/* One sample per stack of each source, its values of every sample type in e->vals. */
static int
add_sources(struct encoder *e, const struct encode_window *w)
{
	for (unsigned k = 0; k < w->nsrc; k++) {
		const struct encode_source *src = &w->src[k];

		e->first[k] = e->nes;
		for (size_t i = 0; i < src->set->nstacks; i++) {
			const struct wstack *s = &src->set->stacks[i];
			struct esample *es;

			if (grow_array((void **)&e->es, &e->cap_es, e->nes, 1, sizeof(*e->es)) < 0 ||
			    grow_array((void **)&e->vals, &e->cap_vals, e->nvals, src->nvalues,
				       sizeof(*e->vals)) < 0)
				return fail(e, "out of memory");
			es = &e->es[e->nes];
			*es = (struct esample){ .vals = e->nvals };
			if ((es->stack = dict_stack(&e->d, src->set->locs + s->locs, s->nlocs)) < 0 ||
			    sample_attrs(e, s->pid, s->tid, es->attrs, &es->nattrs) < 0)
				return fail(e, NULL);
			for (unsigned v = 0; v < src->nvalues; v++)
				e->vals[e->nvals++] = (int64_t)src->value(s, v);
			e->nes++;
		}
	}
	e->first[w->nsrc] = e->nes;
	return 0;
}

int
encode_point_ok(const struct encode_window *w, const struct tl_sample *s)
{
	return s->time >= w->start && s->time < w->end &&
	       stream_unix_ns(s->time, w->clock_offset_ns) > 0;
}

void
encode_count_points(const struct encode_window *w, uint64_t *ok, uint64_t *errors)
{
	*ok = *errors = 0;
	for (size_t i = 0; w->tl && i < w->tl->n; i++)
		if (!(w->tl->s[i].flags & TL_OFFCPU))
			encode_point_ok(w, &w->tl->s[i]) ? (*ok)++ : (*errors)++;
}

static int
point_cmp(const void *a, const void *b)
{
	const struct tlpoint *x = a, *y = b;
	int c = memcmp(x->key, y->key, sizeof(x->key));

	return c ? c : (x->at > y->at) - (x->at < y->at);
}

/* The timeline's CPU samples inside the window, each a point of the sample of its stack
 * and attributes; those whose time cannot be turned into Unix time inside the window are
 * counted in tl_errors. */
static int
add_points(struct encoder *e, const struct encode_window *w)
{
	const struct timeline *tl = w->tl;

	e->npts = 0;
	for (size_t i = 0; i < tl->n; i++) {
		const struct tl_sample *s = &tl->s[i];
		struct tlpoint *p;
		uint32_t n;

		if (s->flags & TL_OFFCPU)
			continue;
		if (!encode_point_ok(w, s)) {
			e->tl_errors++;
			continue;
		}
		if (grow_array((void **)&e->pts, &e->cap_pts, e->npts, 1, sizeof(*e->pts)) < 0)
			return fail(e, "out of memory");
		p = &e->pts[e->npts];
		memset(p->key, 0, sizeof(p->key));
		if ((p->key[0] = dict_stack(&e->d, tl->locs + s->locs, s->nlocs)) < 0 ||
		    sample_attrs(e, s->pid, s->tid, p->key + 1, &n) < 0)
			return fail(e, NULL);
		p->at = (uint32_t)e->npts++;
		p->value = (int64_t)s->period;
		p->ts = (uint64_t)stream_unix_ns(s->time, w->clock_offset_ns);
	}
	return 0;
}

/* Points of one identity become one sample with aligned values and timestamps. */
static int
add_timeline(struct encoder *e, const struct encode_window *w)
{
	if (add_points(e, w) < 0)
		return -1;
	qsort(e->pts, e->npts, sizeof(*e->pts), point_cmp);
	if (grow_array((void **)&e->vals, &e->cap_vals, e->nvals, e->npts, sizeof(*e->vals)) < 0 ||
	    grow_array((void **)&e->ts, &e->cap_ts, 0, e->nvals + e->npts, sizeof(*e->ts)) < 0)
		return fail(e, "out of memory");
	for (size_t i = 0; i < e->npts; i++) {
		const struct tlpoint *p = &e->pts[i];

		if (i == 0 || memcmp(p->key, p[-1].key, sizeof(p->key))) {
			if (grow_array((void **)&e->es, &e->cap_es, e->nes, 1, sizeof(*e->es)) < 0)
				return fail(e, "out of memory");
			struct esample *es = &e->es[e->nes++];
			*es = (struct esample){ .stack = p->key[0], .vals = e->nvals };
			while (es->nattrs < 3 && p->key[1 + es->nattrs])
				es->attrs[es->nattrs] = p->key[1 + es->nattrs], es->nattrs++;
		}
		e->ts[e->nvals] = p->ts;
		e->vals[e->nvals++] = p->value;
		e->es[e->nes - 1].n++;
	}
	e->tl_samples = e->npts;
	return 0;
}

static int
value_type(struct encoder *e, OtValueType *vt, struct encode_vt t)
{
	*vt = (OtValueType)OT_VALUE_TYPE_INIT;
	if ((vt->type_strindex = dict_cstr(&e->d, t.type)) < 0 ||
	    (vt->unit_strindex = dict_cstr(&e->d, t.unit)) < 0)
		return fail(e, NULL);
	return 0;
}

/* A new Profile of the window: its sample type, period, times and a random id. */
static OtProfile *
new_profile(struct encoder *e, const struct encode_window *w, struct encode_vt st,
	    struct encode_vt pt, int64_t period)
{
	size_t n = e->nprofiles;
	OtProfile *p = &e->profiles[n];

	*p = (OtProfile)OT_PROFILE_INIT;
	if (value_type(e, &e->vts[2 * n], st) < 0)
		return NULL;
	p->sample_type = &e->vts[2 * n];
	if (pt.type) {
		if (value_type(e, &e->vts[2 * n + 1], pt) < 0)
			return NULL;
		p->period_type = &e->vts[2 * n + 1];
		p->period = period;
	}
	p->time_unix_nano = (uint64_t)stream_unix_ns(w->start, w->clock_offset_ns);
	p->duration_nano = w->end > w->start ? w->end - w->start : 0;
	/* All zero is no id: draw again (once in 2^128). */
	do {
		if (RAND_bytes(e->ids[n], 16) != 1) {
			fail(e, "cannot draw a profile id (OpenSSL RAND_bytes)");
			return NULL;
		}
	} while (!memcmp(e->ids[n], (uint8_t[16]){ 0 }, 16));
	p->profile_id = (ProtobufCBinaryData){ 16, e->ids[n] };
	e->pprofiles[e->nprofiles++] = p;
	return p;
}

static OtSample *
put_sample(struct encoder *e, size_t *k, const struct esample *es, size_t vals, size_t n,
	   int timed)
{
	OtSample *s = &e->samples[*k];

	*s = (OtSample)OT_SAMPLE_INIT;
	s->stack_index = es->stack;
	s->n_attribute_indices = es->nattrs;
	s->attribute_indices = (int32_t *)es->attrs;
	s->n_values = n;
	s->values = e->vals + vals;
	if (timed) {
		s->n_timestamps_unix_nano = n;
		s->timestamps_unix_nano = e->ts + vals;
	}
	e->psamples[*k] = s;
	return &e->samples[(*k)++];
}

static int
build_profiles(struct encoder *e, const struct encode_window *w)
{
	size_t total = e->nes * ENCODE_MAX_VALUES, k = 0;

	if (grow_array((void **)&e->samples, &e->cap_samples, 0, total, sizeof(*e->samples)) < 0)
		return fail(e, "out of memory");
	free(e->psamples);
	if (!(e->psamples = calloc(e->cap_samples ? e->cap_samples : 1, sizeof(*e->psamples))))
		return fail(e, "out of memory");
	e->nprofiles = 0;
	for (unsigned j = 0; j < w->nsrc; j++) {
		const struct encode_source *src = &w->src[j];

		for (unsigned v = 0; v < src->nvalues; v++) {
			OtProfile *p = new_profile(e, w, src->vt[v], src->period_type, src->period);

			if (!p)
				return -1;
			p->samples = e->psamples + k;
			for (size_t i = e->first[j]; i < e->first[j + 1]; i++)
				put_sample(e, &k, &e->es[i], e->es[i].vals + v, 1, 0);
			p->n_samples = e->first[j + 1] - e->first[j];
		}
	}
	if (w->tl) {
		OtProfile *p = new_profile(e, w, (struct encode_vt){ "cpu", "nanoseconds" },
					   (struct encode_vt){ "cpu", "nanoseconds" }, w->tl_period);

		if (!p)
			return -1;
		p->samples = e->psamples + k;
		for (size_t i = e->first[w->nsrc]; i < e->nes; i++)
			put_sample(e, &k, &e->es[i], e->es[i].vals, e->es[i].n, 1);
		p->n_samples = e->nes - e->first[w->nsrc];
	}
	return 0;
}

int
encoder_run(struct encoder *e, const struct encode_window *w, uint8_t **buf, size_t *len)
{
	OtDictionary dict;
	OtRequest req = OT_REQUEST_INIT;
	OtResourceProfiles rp = OT_RESOURCE_PROFILES_INIT, *prp = &rp;
	OtScopeProfiles sp = OT_SCOPE_PROFILES_INIT, *psp = &sp;

	*buf = NULL;
	e->nes = e->nvals = 0;
	e->k_pid = e->k_tid = e->k_tname = 0;
	e->tl_samples = e->tl_errors = 0;
	if (w->nsrc > ENCODE_MAX_SOURCES)
		return fail(e, "too many profiles in one window");
	if (dict_reset(&e->d) < 0 || add_sources(e, w) < 0)
		return -1;
	if (w->tl && add_timeline(e, w) < 0)
		return -1;
	if (build_profiles(e, w) < 0)
		return -1;
	if (dict_finish(&e->d, &dict) < 0)
		return fail(e, NULL);
	sp.scope = w->scope;
	sp.n_profiles = e->nprofiles;
	sp.profiles = e->pprofiles;
	rp.resource = w->resource;
	rp.n_scope_profiles = 1;
	rp.scope_profiles = &psp;
	req.n_resource_profiles = 1;
	req.resource_profiles = &prp;
	req.dictionary = &dict;
	*len = REQUEST_FN(get_packed_size)(&req);
	if (!(*buf = malloc(*len ? *len : 1)))
		return fail(e, "out of memory");
	REQUEST_FN(pack)(&req, *buf);
	return 0;
}
