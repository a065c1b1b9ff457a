/* symapi: /symbolicate/v5 and /source/v1 (see symapi.h; /asm/v1 is asm.c). */
#include "symapi.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errbuf.h"
#include "reqparse.h"
#include "symbolize.h"

#define MAX_INLINE 64

static int
unhex(const char *hex, uint8_t *id, size_t max)
{
	size_t n = strlen(hex) / 2;

	if (n > max)
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned v;
		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return -1;
		id[i] = (uint8_t)v;
	}
	return (int)n;
}

static void
rescan(struct serve *s)
{
	if (s->module_cache)
		modindex_scan(&s->mods, s->module_cache);
	for (size_t i = 0; i < s->nsymbol_dirs; i++)
		modindex_scan(&s->mods, s->symbol_dirs[i]);
}

struct symmod *
symapi_module(struct serve *s, const char *debug_name, const char *breakpad,
	      const char *code_id, char *err, size_t errlen)
{
	const struct modent *e = NULL;
	uint8_t id[64];
	int n;

	if (code_id && *code_id && modindex_add(&s->mods, code_id, NULL, NULL) == 0) {
		for (size_t i = 0; i < s->mods.n && !e; i++)
			if (strcmp(s->mods.e[i].build_id, code_id) == 0)
				e = &s->mods.e[i];
	}
	if (!e && breakpad && *breakpad && !(e = modindex_find(&s->mods, breakpad, debug_name))) {
		rescan(s);	/* the module cache grows while a recording runs */
		e = modindex_find(&s->mods, breakpad, debug_name);
	}
	if (!e) {
		errbuf_fail(err, errlen, "no module with that id is known (no profile, module "
			    "cache or --symbol-dir names it)");
		return NULL;
	}
	if ((n = unhex(e->build_id, id, sizeof(id))) < 0) {
		errbuf_fail(err, errlen, "bad build id");
		return NULL;
	}
	struct symmod *m = symbolizer_module(s->sym, e->path, id, (size_t)n);
	if (!m)
		errbuf_fail(err, errlen, "%s", symbolizer_error(s->sym));
	return m;
}

static json_t *
hexstr(uint64_t v)
{
	char b[24];

	snprintf(b, sizeof(b), "0x%" PRIx64, v);
	return json_string(b);
}

/* Adds file and line (when known) to o. */
static void
put_pos(json_t *o, const char *file, uint32_t line)
{
	if (file)
		json_object_set_new(o, "file", json_string(file));
	if (line)
		json_object_set_new(o, "line", json_integer(line));
}

static json_t *
frame_json(struct symmod *m, size_t index, const char *module, uint32_t addr)
{
	struct symframe f[MAX_INLINE];
	uint64_t va, lo, hi;
	json_t *o = json_object();
	int n;

	json_object_set_new(o, "frame", json_integer((json_int_t)index));
	json_object_set_new(o, "module_offset", hexstr(addr));
	json_object_set_new(o, "module", json_string(module));
	if (!m || symmod_offset_to_vaddr(m, addr, &va) < 0 ||
	    (n = symmod_lookup(m, va, f, MAX_INLINE)) <= 0 ||
	    symmod_func_range(m, va, &lo, &hi) < 0)
		return o;
	json_object_set_new(o, "function", json_string(f[n - 1].name));
	json_object_set_new(o, "function_offset", hexstr(va - lo));
	if (hi > lo)
		json_object_set_new(o, "function_size", hexstr(hi - lo));
	put_pos(o, f[n - 1].file, f[n - 1].line);
	if (n > 1) {
		json_t *inl = json_array();
		for (int i = 0; i < n - 1; i++) {
			json_t *x = json_pack("{s:s}", "function", f[i].name);
			put_pos(x, f[i].file, f[i].line);
			json_array_append_new(inl, x);
		}
		json_object_set_new(o, "inlines", inl);
	}
	return o;
}

static json_t *
job_json(struct serve *s, const struct symreq_job *j)
{
	json_t *found = json_object(), *errors = json_object(), *stacks = json_array();
	struct symmod **mods = calloc(j->nmodules + 1, sizeof(*mods));
	char key[2 * SYMREQ_NAME_MAX + 2], why[600];

	for (size_t i = 0; mods && i < j->nmodules; i++) {
		const struct symreq_module *d = &j->modules[i];
		snprintf(key, sizeof(key), "%s/%s", d->debug_name, d->breakpad_id);
		mods[i] = symapi_module(s, d->debug_name, d->breakpad_id, NULL, why, sizeof(why));
		json_object_set_new(found, key, json_boolean(mods[i] != NULL));
		if (!mods[i])
			json_object_set_new(errors, key, json_pack("[{s:s, s:s}]", "name",
								   "NotFound", "message", why));
	}
	for (size_t k = 0; k < j->nstacks; k++) {
		json_t *st = json_array();
		for (size_t i = 0; i < j->stacks[k].n; i++) {
			const struct symreq_frame *f = &j->stacks[k].frames[i];
			json_array_append_new(st, frame_json(mods ? mods[f->module] : NULL, i,
							     j->modules[f->module].debug_name,
							     f->address));
		}
		json_array_append_new(stacks, st);
	}
	free(mods);
	json_t *r = json_pack("{s:o, s:o}", "stacks", stacks, "found_modules", found);
	if (json_object_size(errors))
		json_object_set_new(r, "module_errors", errors);
	else
		json_decref(errors);
	return r;
}

void
symapi_symbolicate(struct serve *s, const char *body, size_t len, struct answer *a)
{
	struct symreq r;
	char why[300];

	if (symreq_parse(body, len, &r, why, sizeof(why)) < 0) {
		answer_error(a, 400, "symbolicate/v5: %s", why);
		return;
	}
	json_t *results = json_array();
	for (size_t i = 0; i < r.njobs; i++)
		json_array_append_new(results, job_json(s, &r.jobs[i]));
	symreq_free(&r);
	answer_json(a, json_pack("{s:o}", "results", results));
}
