/* reqparse: checking the symbol API's request bodies (see reqparse.h). */
#include "reqparse.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errbuf.h"

int
reqparse_hex32(const char *s, uint32_t *v)
{
	uint64_t x = 0;
	size_t i;

	if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X') || !s[2])
		return -1;
	for (i = 2; s[i]; i++) {
		int c = s[i], d = c >= '0' && c <= '9' ? c - '0' :
			c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (d < 0 || i > 17)
			return -1;
		x = x * 16 + (uint64_t)d;
	}
	if (x > UINT32_MAX)
		return -1;
	*v = (uint32_t)x;
	return 0;
}

/* samply's rule: a debugName is a file name (letters, digits and _.+{}[]:@<> ~-). */
static int
name_ok(const char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      strchr("_.+{}[]:@<> ~-", *s)))
			return 0;
	return 1;
}

static int
hex_ok(const char *s)
{
	return s[strspn(s, "0123456789abcdefABCDEF")] == 0;
}

/* Copies a string member (or "" when absent and optional) after checking it. */
static int
get_str(json_t *o, const char *key, int optional, int (*ok)(const char *), char *dst,
	char *err, size_t errlen)
{
	json_t *v = json_object_get(o, key);

	if (!v && optional) {
		dst[0] = 0;
		return 0;
	}
	if (!json_is_string(v))
		return errbuf_fail(err, errlen, "'%s' must be a string", key);
	const char *s = json_string_value(v);
	size_t n = json_string_length(v);
	if (n >= SYMREQ_NAME_MAX || strlen(s) != n)
		return errbuf_fail(err, errlen, "'%s' is too long or holds a NUL", key);
	if (ok && !ok(s))
		return errbuf_fail(err, errlen, "'%s' holds characters it may not", key);
	memcpy(dst, s, n + 1);
	return 0;
}

static json_t *
load(const char *body, size_t len, char *err, size_t errlen)
{
	json_error_t je;
	json_t *root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);

	if (!root)
		errbuf_fail(err, errlen, "not JSON: %s (line %d)", je.text, je.line);
	else if (!json_is_object(root)) {
		errbuf_fail(err, errlen, "the body must be a JSON object");
		json_decref(root);
		root = NULL;
	}
	return root;
}

static int
parse_modules(json_t *mm, struct symreq_job *job, char *err, size_t errlen)
{
	size_t i;
	json_t *m;

	if (!json_is_array(mm))
		return errbuf_fail(err, errlen, "'memoryMap' must be an array");
	if (json_array_size(mm) > UINT32_MAX ||
	    !(job->modules = calloc(json_array_size(mm) + 1, sizeof(*job->modules))))
		return errbuf_fail(err, errlen, "out of memory");
	json_array_foreach(mm, i, m) {
		json_t *n = json_array_get(m, 0), *id = json_array_get(m, 1);
		struct symreq_module *d = &job->modules[i];
		if (!json_is_array(m) || json_array_size(m) != 2 || !json_is_string(n) ||
		    !json_is_string(id))
			return errbuf_fail(err, errlen, "memoryMap[%zu] must be [debugName, id]", i);
		if (json_string_length(n) >= SYMREQ_NAME_MAX ||
		    json_string_length(id) >= SYMREQ_NAME_MAX ||
		    strlen(json_string_value(n)) != json_string_length(n) ||
		    !name_ok(json_string_value(n)) || !hex_ok(json_string_value(id)))
			return errbuf_fail(err, errlen, "memoryMap[%zu]: bad debugName or id", i);
		strcpy(d->debug_name, json_string_value(n));
		strcpy(d->breakpad_id, json_string_value(id));
		job->nmodules++;
	}
	return 0;
}

static int
parse_stack(json_t *s, struct symreq_stack *st, size_t nmods, size_t *total, char *err,
	    size_t errlen)
{
	size_t i;
	json_t *f;

	if (!json_is_array(s))
		return errbuf_fail(err, errlen, "a stack must be an array");
	if ((*total += json_array_size(s)) > SYMREQ_MAX_FRAMES)
		return errbuf_fail(err, errlen, "more than %d frames", SYMREQ_MAX_FRAMES);
	if (!(st->frames = calloc(json_array_size(s) + 1, sizeof(*st->frames))))
		return errbuf_fail(err, errlen, "out of memory");
	json_array_foreach(s, i, f) {
		json_t *m = json_array_get(f, 0), *a = json_array_get(f, 1);
		if (!json_is_array(f) || json_array_size(f) != 2 || !json_is_integer(m) ||
		    !json_is_integer(a))
			return errbuf_fail(err, errlen, "a frame must be [moduleIndex, address]");
		json_int_t mi = json_integer_value(m), ad = json_integer_value(a);
		if (mi < 0 || (size_t)mi >= nmods || ad < 0 || ad > UINT32_MAX)
			return errbuf_fail(err, errlen, "frame [%lld, %lld] out of range",
					   (long long)mi, (long long)ad);
		st->frames[i] = (struct symreq_frame){ (uint32_t)mi, (uint32_t)ad };
		st->n++;
	}
	return 0;
}

static int
parse_job(json_t *j, struct symreq_job *job, size_t *total, char *err, size_t errlen)
{
	json_t *stacks = json_object_get(j, "stacks"), *s;
	size_t i;

	if (!json_is_object(j))
		return errbuf_fail(err, errlen, "a job must be an object");
	if (parse_modules(json_object_get(j, "memoryMap"), job, err, errlen) < 0)
		return -1;
	if (!json_is_array(stacks))
		return errbuf_fail(err, errlen, "'stacks' must be an array");
	if (!(job->stacks = calloc(json_array_size(stacks) + 1, sizeof(*job->stacks))))
		return errbuf_fail(err, errlen, "out of memory");
	json_array_foreach(stacks, i, s) {
		job->nstacks++;
		if (parse_stack(s, &job->stacks[i], job->nmodules, total, err, errlen) < 0)
			return -1;
	}
	return 0;
}

int
symreq_parse(const char *body, size_t len, struct symreq *out, char *err, size_t errlen)
{
	json_t *root = load(body, len, err, errlen), *jobs, *j;
	size_t i, total = 0;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (!root)
		return -1;
	/* A body that is one job without the "jobs" wrapper is accepted too. */
	jobs = json_object_get(root, "jobs");
	if (!jobs) {
		jobs = json_array();
		json_array_append(jobs, root);
	} else if (!json_is_array(jobs)) {
		json_decref(root);
		return errbuf_fail(err, errlen, "'jobs' must be an array");
	} else {
		json_incref(jobs);
	}
	if (json_array_size(jobs) > SYMREQ_MAX_JOBS)
		rc = errbuf_fail(err, errlen, "more than %d jobs", SYMREQ_MAX_JOBS);
	else if (!(out->jobs = calloc(json_array_size(jobs) + 1, sizeof(*out->jobs))))
		rc = errbuf_fail(err, errlen, "out of memory");
	json_array_foreach(jobs, i, j) {
		if (rc < 0)
			break;
		out->njobs++;
		rc = parse_job(j, &out->jobs[i], &total, err, errlen);
	}
	json_decref(jobs);
	json_decref(root);
	if (rc < 0)
		symreq_free(out);
	return rc;
}

void
symreq_free(struct symreq *r)
{
	for (size_t i = 0; r->jobs && i < r->njobs; i++) {
		struct symreq_job *j = &r->jobs[i];
		for (size_t k = 0; j->stacks && k < j->nstacks; k++)
			free(j->stacks[k].frames);
		free(j->stacks);
		free(j->modules);
	}
	free(r->jobs);
	memset(r, 0, sizeof(*r));
}

static int
get_hex(json_t *o, const char *key, uint32_t *v, char *err, size_t errlen)
{
	json_t *s = json_object_get(o, key);

	if (!json_is_string(s) || reqparse_hex32(json_string_value(s), v) < 0)
		return errbuf_fail(err, errlen, "'%s' must be a 0x hex string of at most 32 bits",
				   key);
	return 0;
}

int
sourcereq_parse(const char *body, size_t len, struct sourcereq *out, char *err,
		size_t errlen)
{
	json_t *root = load(body, len, err, errlen), *file;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (!root)
		return -1;
	file = json_object_get(root, "file");
	if (get_str(root, "debugName", 0, name_ok, out->debug_name, err, errlen) < 0 ||
	    get_str(root, "debugId", 0, hex_ok, out->debug_id, err, errlen) < 0 ||
	    get_hex(root, "moduleOffset", &out->module_offset, err, errlen) < 0)
		goto out;
	if (!json_is_string(file) || !json_string_length(file) ||
	    strlen(json_string_value(file)) != json_string_length(file) ||
	    json_string_length(file) >= 4096) {
		errbuf_fail(err, errlen, "'file' must be a path");
		goto out;
	}
	if (!(out->file = strdup(json_string_value(file)))) {
		errbuf_fail(err, errlen, "out of memory");
		goto out;
	}
	rc = 0;
out:
	json_decref(root);
	return rc;
}

void
sourcereq_free(struct sourcereq *r)
{
	free(r->file);
	r->file = NULL;
}

int
asmreq_parse(const char *body, size_t len, struct asmreq *out, char *err, size_t errlen)
{
	json_t *root = load(body, len, err, errlen), *until;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (!root)
		return -1;
	until = json_object_get(root, "continueUntilFunctionEnd");
	if (get_str(root, "debugName", 1, name_ok, out->debug_name, err, errlen) < 0 ||
	    get_str(root, "debugId", 1, hex_ok, out->debug_id, err, errlen) < 0 ||
	    get_str(root, "name", 1, name_ok, out->name, err, errlen) < 0 ||
	    get_str(root, "codeId", 1, hex_ok, out->code_id, err, errlen) < 0 ||
	    get_hex(root, "startAddress", &out->start, err, errlen) < 0 ||
	    get_hex(root, "size", &out->size, err, errlen) < 0)
		goto out;
	if (until && !json_is_boolean(until)) {
		errbuf_fail(err, errlen, "'continueUntilFunctionEnd' must be true or false");
		goto out;
	}
	out->until_function_end = json_is_true(until);
	if (!out->debug_id[0] && !out->code_id[0]) {
		errbuf_fail(err, errlen, "a request needs 'debugId' or 'codeId'");
		goto out;
	}
	rc = 0;
out:
	json_decref(root);
	return rc;
}
