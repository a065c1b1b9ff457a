#include "fxwrite.h"
#include "breakpad.h"
#include "json.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct fxw {
	struct json j;
	struct jslb *slabs;
	const struct fxmodel *m;
	const struct timeline *t;
	const struct fxmeta *meta;
	int failed;             /* out of memory or a slab error: reason in err */
	char err[200];
};

/* ---- columns ---- */

static void
nomem(struct fxw *w, const char *why)
{
	if (!w->failed)
		snprintf(w->err, sizeof(w->err), "%s", why);
	w->failed = 1;
}

/* Puts {"$s":ix} where the column goes; ix < 0 means adding the slab failed. */
static void
placeholder(struct fxw *w, long ix)
{
	if (ix < 0) {
		nomem(w, w->slabs->err);
		ix = 0;
	}
	json_object_begin(&w->j);
	json_ku64(&w->j, "$s", (uint64_t)ix);
	json_object_end(&w->j);
}

/* A slab is allowed for this column in this format version (and a jslb is being written). */
static int
slab_ok(const struct fxw *w, int since)
{
	return w->slabs && FX_VERSION >= since;
}

static void
col_i32(struct fxw *w, const char *key, const int32_t *v, size_t n, int since)
{
	json_key(&w->j, key);
	if (slab_ok(w, since)) {
		placeholder(w, jslb_add_i32(w->slabs, v, n));
		return;
	}
	json_array_begin(&w->j);
	for (size_t i = 0; i < n; i++)
		json_i64(&w->j, v[i]);
	json_array_end(&w->j);
}

static void
col_u8(struct fxw *w, const char *key, const uint8_t *v, size_t n, int since)
{
	json_key(&w->j, key);
	if (slab_ok(w, since)) {
		placeholder(w, jslb_add_u8(w->slabs, v, n));
		return;
	}
	json_array_begin(&w->j);
	for (size_t i = 0; i < n; i++)
		json_u64(&w->j, v[i]);
	json_array_end(&w->j);
}

static void
col_f64(struct fxw *w, const char *key, const double *v, size_t n, int since)
{
	json_key(&w->j, key);
	if (slab_ok(w, since)) {
		placeholder(w, jslb_add_f64(w->slabs, v, n));
		return;
	}
	json_array_begin(&w->j);
	for (size_t i = 0; i < n; i++)
		json_double(&w->j, v[i]);
	json_array_end(&w->j);
}

/* n copies of null (what == 0), 0 (1), false (2) or 1 (3): columns this product never
 * fills. */
static void
col_same(struct fxw *w, const char *key, size_t n, int what)
{
	json_key(&w->j, key);
	json_array_begin(&w->j);
	for (size_t i = 0; i < n; i++) {
		if (what == 0)
			json_nil(&w->j);
		else if (what == 1 || what == 3)
			json_u64(&w->j, what == 3);
		else
			json_bool(&w->j, false);
	}
	json_array_end(&w->j);
}

static void
empty_table(struct fxw *w, const char *key, const char *const *cols)
{
	json_key(&w->j, key);
	json_object_begin(&w->j);
	json_ku64(&w->j, "length", 0);
	for (; *cols; cols++) {
		json_key(&w->j, *cols);
		json_array_begin(&w->j);
		json_array_end(&w->j);
	}
	json_object_end(&w->j);
}

/* ---- meta and libs ---- */

static void
category(struct fxw *w, const char *name, const char *color)
{
	json_object_begin(&w->j);
	json_kstring(&w->j, "name", name);
	json_kstring(&w->j, "color", color);
	json_key(&w->j, "subcategories");
	json_array_begin(&w->j);
	json_str(&w->j, "Other");
	json_array_end(&w->j);
	json_object_end(&w->j);
}

static void
write_meta(struct fxw *w)
{
	const struct fxmeta *mt = w->meta;
	struct json *j = &w->j;

	json_key(j, "meta");
	json_object_begin(j);
	json_ku64(j, "version", 24);    /* the Gecko format's: informational, as samply writes */
	json_ku64(j, "preprocessedProfileVersion", FX_VERSION);
	json_key(j, "interval");
	json_double(j, mt->cpu_frequency ? 1000.0 / mt->cpu_frequency : 1.0);
	json_key(j, "startTime");
	json_double(j, (double)stream_unix_ns(mt->start, mt->clock_offset_ns) / 1e6);
	if (mt->monotonic)
		json_ku64(j, "startTimeAsClockMonotonicNanosecondsSinceBoot", mt->start);
	json_ku64(j, "processType", 0);
	json_kstring(j, "product", mt->product);
	json_ku64(j, "stackwalk", 1);
	json_kbool(j, "debug", false);
	json_key(j, "categories");
	json_array_begin(j);
	category(w, "Other", "grey");   /* the first grey one is the default */
	category(w, "User", "yellow");
	category(w, "Kernel", "orange");
	json_array_end(j);
	json_key(j, "markerSchema");
	json_array_begin(j);
	json_array_end(j);
	json_kbool(j, "symbolicated", w->m->symbolicated);
	json_key(j, "sampleUnits");
	json_object_begin(j);
	json_kstring(j, "time", "ms");
	json_kstring(j, "eventDelay", "ms");
	json_kstring(j, "threadCPUDelta", "ns");
	json_object_end(j);
	json_kbool(j, "usesOnlyOneStackType", true);
	json_kbool(j, "sourceCodeIsNotOnSearchfox", true);
	json_kstring(j, "platform", "Linux");
	json_object_end(j);
}

static void
write_lib(struct fxw *w, const struct fxlib *l)
{
	const struct defs *d = w->meta->defs;
	const char *path = defs_str(d, l->m->path), *bid = defs_str(d, l->m->build_id);
	size_t nlen;
	const char *name = fxstr_at(&w->m->strs, (size_t)l->name, &nlen);
	char breakpad[34];

	breakpad_id(bid, breakpad);
	json_object_begin(&w->j);
	json_key(&w->j, "name");
	json_string_len(&w->j, name, nlen);
	json_kstring(&w->j, "path", path);
	json_key(&w->j, "debugName");   /* the symbol server refuses a '/' here */
	json_string_len(&w->j, name, nlen);
	json_kstring(&w->j, "debugPath", path);
	json_kstring(&w->j, "breakpadId", breakpad);
	json_kstring(&w->j, "codeId", *bid ? bid : NULL);
	json_kstring(&w->j, "arch", w->meta->arch);
	json_object_end(&w->j);
}

static void
write_libs(struct fxw *w)
{
	json_key(&w->j, "libs");
	json_array_begin(&w->j);
	for (size_t i = 0; i < w->m->n_libs; i++)
		write_lib(w, &w->m->libs[i]);
	json_array_end(&w->j);
}

/* ---- shared tables ---- */

static void
write_strings(struct fxw *w)
{
	const struct fxstr *s = &w->m->strs;

	json_key(&w->j, "stringArray");
	json_array_begin(&w->j);
	for (size_t i = 0; i < s->n; i++) {
		size_t len;
		const char *p = fxstr_at(s, i, &len);
		json_string_len(&w->j, p, len);
	}
	json_array_end(&w->j);
}

static void
write_stacks(struct fxw *w)
{
	const struct fxmodel *m = w->m;
	size_t n = m->n_stack_frame;
	int32_t *off = malloc((n ? n : 1) * sizeof(*off));

	if (!off) {
		nomem(w, "out of memory");
		return;
	}
	/* prefixOffset: 0 for a root, else how far back the parent is (parents come first). */
	for (size_t i = 0; i < n; i++)
		off[i] = m->stack_prefix[i] < 0 ? 0 : (int32_t)i - m->stack_prefix[i];
	json_key(&w->j, "stackTable");
	json_object_begin(&w->j);
	json_ku64(&w->j, "length", n);
	col_i32(w, "frame", m->stack_frame, n, 65);
	col_i32(w, "prefixOffset", off, n, 66);
	json_object_end(&w->j);
	free(off);
}

/* address as an Int32 slab when every value fits, else as a JSON array. */
static void
frame_addresses(struct fxw *w, int32_t *tmp)
{
	const struct fxmodel *m = w->m;
	size_t n = m->n_frames, i;

	for (i = 0; i < n && m->frames[i].address <= INT32_MAX; i++)
		tmp[i] = (int32_t)m->frames[i].address;
	if (i == n) {
		col_i32(w, "address", tmp, n, 67);
		return;
	}
	json_key(&w->j, "address");
	json_array_begin(&w->j);
	for (i = 0; i < n; i++)
		json_i64(&w->j, m->frames[i].address);
	json_array_end(&w->j);
}

static void
write_frames(struct fxw *w)
{
	const struct fxmodel *m = w->m;
	size_t n = m->n_frames, i;
	int32_t *tmp = malloc((n ? n : 1) * sizeof(*tmp));
	uint8_t *depth = malloc(n ? n : 1);

	if (!tmp || !depth) {
		free(tmp);
		free(depth);
		nomem(w, "out of memory");
		return;
	}
	json_key(&w->j, "frameTable");
	json_object_begin(&w->j);
	json_ku64(&w->j, "length", n);
	frame_addresses(w, tmp);
	for (i = 0; i < n; i++)
		depth[i] = m->frames[i].inline_depth;
	col_u8(w, "inlineDepth", depth, n, 67);
	json_key(&w->j, "category");
	json_array_begin(&w->j);
	for (i = 0; i < n; i++)
		json_u64(&w->j, m->frames[i].category);
	json_array_end(&w->j);
	col_same(w, "subcategory", n, 1);
	for (i = 0; i < n; i++)
		tmp[i] = m->frames[i].func;
	col_i32(w, "func", tmp, n, 67);
	col_same(w, "nativeSymbol", n, 0);
	col_same(w, "innerWindowID", n, 1);
	json_key(&w->j, "line");
	json_array_begin(&w->j);
	for (i = 0; i < n; i++)
		m->frames[i].line ? json_u64(&w->j, m->frames[i].line) : json_nil(&w->j);
	json_array_end(&w->j);
	col_same(w, "column", n, 0);
	col_same(w, "originalLocation", n, 0);
	json_object_end(&w->j);
	free(tmp);
	free(depth);
}

static void
write_funcs(struct fxw *w)
{
	const struct fxmodel *m = w->m;
	size_t n = m->n_funcs, i;
	struct json *j = &w->j;

	json_key(j, "funcTable");
	json_object_begin(j);
	json_ku64(j, "length", n);
	json_key(j, "name");
	json_array_begin(j);
	for (i = 0; i < n; i++)
		json_i64(j, m->funcs[i].name);
	json_array_end(j);
	col_same(w, "isJS", n, 2);
	col_same(w, "relevantForJS", n, 2);
	json_key(j, "resource");
	json_array_begin(j);
	for (i = 0; i < n; i++)
		json_i64(j, m->funcs[i].resource);
	json_array_end(j);
	json_key(j, "source");
	json_array_begin(j);
	for (i = 0; i < n; i++)
		m->funcs[i].source < 0 ? json_nil(j) : json_i64(j, m->funcs[i].source);
	json_array_end(j);
	json_key(j, "lineNumber");
	json_array_begin(j);
	for (i = 0; i < n; i++)
		m->funcs[i].line ? json_u64(j, m->funcs[i].line) : json_nil(j);
	json_array_end(j);
	col_same(w, "columnNumber", n, 0);
	col_same(w, "originalLocation", n, 0);
	json_object_end(j);
}

/* One resource per library, named after it, of type 1 (library). */
static void
write_resources(struct fxw *w)
{
	size_t n = w->m->n_libs, i;
	struct json *j = &w->j;

	json_key(j, "resourceTable");
	json_object_begin(j);
	json_ku64(j, "length", n);
	json_key(j, "lib");
	json_array_begin(j);
	for (i = 0; i < n; i++)
		json_u64(j, i);
	json_array_end(j);
	json_key(j, "name");
	json_array_begin(j);
	for (i = 0; i < n; i++)
		json_i64(j, w->m->libs[i].name);
	json_array_end(j);
	col_same(w, "host", n, 0);
	json_key(j, "type");
	json_array_begin(j);
	for (i = 0; i < n; i++)
		json_u64(j, 1);
	json_array_end(j);
	json_object_end(j);
}

/* Source files of native code: a file name each, no id, content or source map. */
static void
write_sources(struct fxw *w)
{
	size_t n = w->m->n_sources, i;
	struct json *j = &w->j;

	json_key(j, "sources");
	json_object_begin(j);
	json_ku64(j, "length", n);
	col_same(w, "id", n, 0);
	json_key(j, "filename");
	json_array_begin(j);
	for (i = 0; i < n; i++)
		json_i64(j, w->m->sources[i]);
	json_array_end(j);
	col_same(w, "startLine", n, 3);
	col_same(w, "startColumn", n, 3);
	col_same(w, "sourceMapURL", n, 0);
	col_same(w, "content", n, 0);
	json_object_end(j);
}

static void
write_shared(struct fxw *w)
{
	static const char *const native[] = { "libIndex", "address", "name", "functionSize",
					      NULL };
	static const char *const locs[] = { "source", "line", "column", NULL };

	json_key(&w->j, "shared");
	json_object_begin(&w->j);
	write_strings(w);
	write_stacks(w);
	write_frames(w);
	write_funcs(w);
	write_resources(w);
	empty_table(w, "nativeSymbols", native);
	write_sources(w);
	empty_table(w, "sourceLocationTable", locs);
	json_object_end(&w->j);
}

/* ---- threads ---- */

/* The name of tid from its latest FR_COMM, else fallback. */
static const char *
comm_of(const struct defs *d, uint32_t tid, const char *fallback)
{
	const struct pstr *c = defs_comm(d, tid);

	return c && c->len ? defs_str(d, *c) : fallback;
}

static void
write_samples(struct fxw *w, const struct fxthread *th, double *time)
{
	const struct fxmodel *m = w->m;
	const size_t *o = m->order + th->first;
	uint64_t start = w->meta->start;
	struct json *j = &w->j;
	size_t i, n = th->n;

	json_key(j, "samples");
	json_object_begin(j);
	json_ku64(j, "length", n);
	json_key(j, "stack");
	json_array_begin(j);
	for (i = 0; i < n; i++)
		m->sample_stack[o[i]] < 0 ? json_nil(j) : json_i64(j, m->sample_stack[o[i]]);
	json_array_end(j);
	/* A late event (before the window start) is shown at the start. */
	for (i = 0; i < n; i++) {
		uint64_t t = w->t->s[o[i]].time;
		time[i] = (double)(t > start ? t - start : 0) / 1e6;
	}
	col_f64(w, "time", time, n, 67);
	/* CPU time per sample, so the call tree adds up milliseconds of CPU, not counts. */
	json_key(j, "weight");
	json_array_begin(j);
	for (i = 0; i < n; i++)
		json_double(j, (double)w->t->s[o[i]].period / 1e6);
	json_array_end(j);
	json_kstring(j, "weightType", "tracing-ms");
	json_key(j, "threadCPUDelta");
	json_array_begin(j);
	for (i = 0; i < n; i++)
		json_u64(j, w->t->s[o[i]].period);
	json_array_end(j);
	json_object_end(j);
}

/* The thread's sampled allocations and frees (fxalloc.h), as the balanced table the front
 * end pairs into retained memory: bytes, negative for a free, and the block's number. */
static void
write_allocations(struct fxw *w, const struct fxthread *th)
{
	const struct fxmodel *m = w->m;
	const struct timeline *at = &m->fa->tl;
	const size_t *o = m->alloc_order + th->first_alloc;
	uint64_t start = w->meta->start;
	struct json *j = &w->j;
	size_t i, n = th->n_alloc;

	json_key(j, "nativeAllocations");
	json_object_begin(j);
	json_key(j, "time");
	json_array_begin(j);
	for (i = 0; i < n; i++) {
		uint64_t t = at->s[o[i]].time;
		json_double(j, (double)(t > start ? t - start : 0) / 1e6);
	}
	json_array_end(j);
	json_key(j, "weight");
	json_array_begin(j);
	for (i = 0; i < n; i++) {
		const struct tl_sample *s = &at->s[o[i]];
		uint64_t b = s->period > INT64_MAX ? INT64_MAX : s->period;
		json_i64(j, s->flags & TL_FREE ? -(int64_t)b : (int64_t)b);
	}
	json_array_end(j);
	json_kstring(j, "weightType", "bytes");
	json_key(j, "stack");
	json_array_begin(j);
	for (i = 0; i < n; i++)
		m->alloc_stack[o[i]] < 0 ? json_nil(j) : json_i64(j, m->alloc_stack[o[i]]);
	json_array_end(j);
	json_key(j, "memoryAddress");
	json_array_begin(j);
	for (i = 0; i < n; i++)
		json_u64(j, m->fa->block[o[i]]);
	json_array_end(j);
	json_key(j, "threadId");
	json_array_begin(j);
	for (i = 0; i < n; i++)
		json_u64(j, at->s[o[i]].tid);
	json_array_end(j);
	json_ku64(j, "length", n);
	json_object_end(j);
}

static void
write_thread(struct fxw *w, const struct fxthread *th, double *time)
{
	static const char *const markers[] = { "category", "data", "endTime", "name", "phase",
					       "startTime", NULL };
	const struct defs *d = w->meta->defs;
	char pid[16], tid[16], pname[24];
	const char *proc;
	struct json *j = &w->j;

	snprintf(pid, sizeof(pid), "%" PRIu32, th->pid);
	snprintf(tid, sizeof(tid), "%" PRIu32, th->tid);
	snprintf(pname, sizeof(pname), "pid %" PRIu32, th->pid);
	proc = comm_of(d, th->pid, th->pid == d->target_pid && d->comm.len
					   ? defs_str(d, d->comm) : pname);
	json_object_begin(j);
	if (th->offcpu) {
		/* The thread's off-CPU time, beside its CPU samples: weights are off-CPU ms. */
		char name[STREAM_MAX_STR + 16];
		snprintf(name, sizeof(name), "%s (off-CPU)",
			 comm_of(d, th->tid, th->tid == th->pid ? proc : tid));
		json_kstring(j, "name", name);
	} else {
		json_kstring(j, "name", comm_of(d, th->tid, th->tid == th->pid ? proc : tid));
	}
	json_kbool(j, "isMainThread", th->tid == th->pid && !th->offcpu);
	json_kstring(j, "processType", "default");
	json_kstring(j, "processName", proc);
	json_kstring(j, "pid", pid);   /* a string since format version 47 */
	json_kstring(j, "tid", tid);
	json_ku64(j, "processStartupTime", 0);
	json_knull(j, "processShutdownTime");
	json_ku64(j, "registerTime", 0);
	json_knull(j, "unregisterTime");
	json_key(j, "pausedRanges");
	json_array_begin(j);
	json_array_end(j);
	write_samples(w, th, time);
	if (th->n_alloc)
		write_allocations(w, th);
	empty_table(w, "markers", markers);
	json_object_end(j);
}

static void
write_threads(struct fxw *w)
{
	double *time = malloc((w->t->n ? w->t->n : 1) * sizeof(*time));

	if (!time) {
		nomem(w, "out of memory");
		return;
	}
	json_key(&w->j, "threads");
	json_array_begin(&w->j);
	for (size_t i = 0; i < w->m->n_threads; i++)
		write_thread(w, &w->m->threads[i], time);
	json_array_end(&w->j);
	free(time);
}

static void
empty_array(struct fxw *w, const char *key)
{
	json_key(&w->j, key);
	json_array_begin(&w->j);
	json_array_end(&w->j);
}

int
fxwrite(FILE *f, struct jslb *slabs, const struct fxmodel *m, const struct timeline *t,
	const struct fxmeta *meta, char *err, size_t errlen)
{
	static struct fxw w;    /* holds the JSON nesting stack: keep it off the stack */

	memset(&w, 0, sizeof(w));
	w.slabs = slabs;
	w.m = m;
	w.t = t;
	w.meta = meta;
	json_init(&w.j, f, 0);
	json_object_begin(&w.j);
	write_meta(&w);
	write_libs(&w);
	write_shared(&w);
	write_threads(&w);
	empty_array(&w, "pages");
	empty_array(&w, "profilerOverhead");
	empty_array(&w, "counters");
	json_object_end(&w.j);
	if (json_finish(&w.j) < 0 && !w.failed)
		snprintf(w.err, sizeof(w.err), "%s", w.j.err);
	if (w.failed || w.j.err[0]) {
		snprintf(err, errlen, "%s", w.err);
		return -1;
	}
	return 0;
}
