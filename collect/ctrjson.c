/*
 * The answers of the Docker Engine API and the Kubernetes Pod API, decoded with jansson.
 * Both are untrusted input (fuzz/container_json.c): every field is checked for its type and
 * length, and a missing optional one reads as empty.
 */
#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "ctarget.h"
#include "errbuf.h"

/* obj.key as a string that fits len (with its NUL); "" when absent or not a string.  -1 when
 * it is a string too long for the field. */
static int
get_str(json_t *obj, const char *key, char *out, size_t len)
{
	json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;
	out[0] = 0;
	if (!json_is_string(v))
		return 0;
	size_t n = json_string_length(v);
	const char *s = json_string_value(v);
	if (n >= len || memchr(s, 0, n))
		return -1;
	memcpy(out, s, n);
	out[n] = 0;
	return 0;
}

static int
is_hex64(const char *s)
{
	size_t n = 0;
	for (; s[n]; n++)
		if (!isxdigit((unsigned char)s[n]))
			return 0;
	return n == 64;
}

static void
lower(char *s)
{
	for (; *s; s++)
		*s = (char)tolower((unsigned char)*s);
}

static json_t *
load(const char *json, size_t len, char *err, size_t errlen)
{
	json_error_t e;
	json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &e);
	if (!root) {
		errbuf_fail(err, errlen, "not JSON: %s (line %d)", e.text, e.line);
		return NULL;
	}
	if (!json_is_object(root)) {
		json_decref(root);
		errbuf_fail(err, errlen, "the answer is not a JSON object");
		return NULL;
	}
	return root;
}

int
ctr_docker_parse(const char *json, size_t len, struct ctr_identity *id, char *err,
		 size_t errlen)
{
	char name[sizeof(id->name) + 1];
	json_t *root = load(json, len, err, errlen);
	if (!root)
		return -1;
	json_t *state = json_object_get(root, "State");
	json_t *pid = json_is_object(state) ? json_object_get(state, "Pid") : NULL;
	int rc = -1;
	memset(id, 0, sizeof(*id));
	id->kind = CTR_DOCKER;
	snprintf(id->runtime, sizeof(id->runtime), "docker");
	if (get_str(root, "Id", id->id, sizeof(id->id)) < 0 || !is_hex64(id->id))
		errbuf_fail(err, errlen, "the container inspect answer has no 64-digit Id");
	else if (get_str(root, "Name", name, sizeof(name)) < 0)
		errbuf_fail(err, errlen, "the container's Name is too long");
	else if (!json_is_object(state) || get_str(state, "Status", id->status,
						   sizeof(id->status)) < 0 || !id->status[0])
		errbuf_fail(err, errlen, "the container inspect answer has no State.Status");
	else if (get_str(state, "StartedAt", id->started_at, sizeof(id->started_at)) < 0)
		errbuf_fail(err, errlen, "State.StartedAt is too long");
	else if (pid && (!json_is_integer(pid) || json_integer_value(pid) < 0 ||
			 json_integer_value(pid) > 0x3fffffff))
		errbuf_fail(err, errlen, "State.Pid is not a process id");
	else
		rc = 0;
	if (rc == 0) {
		lower(id->id);
		const char *n = name[0] == '/' ? name + 1 : name;
		if (strlen(n) >= sizeof(id->name))
			rc = errbuf_fail(err, errlen, "the container's Name is too long");
		else
			memcpy(id->name, n, strlen(n) + 1);
		/* Running is also true of a paused container: the status says which. */
		if (strcmp(id->status, "running") == 0 && pid)
			id->pid = (pid_t)json_integer_value(pid);
		else
			id->started_at[0] = 0;
		if (strcmp(id->status, "running") == 0 && id->pid <= 0)
			rc = errbuf_fail(err, errlen, "the running container has no State.Pid");
	}
	json_decref(root);
	return rc;
}

int
ctr_api_message(const char *json, size_t len, char *out, size_t outlen)
{
	char e[8];
	json_t *root = load(json, len, e, sizeof(e));
	int rc = -1;
	if (root && get_str(root, "message", out, outlen) == 0 && out[0]) {
		/* One line: the reason goes into a one-line error. */
		for (char *p = out; *p; p++)
			if (*p == '\n' || *p == '\r')
				*p = ' ';
		rc = 0;
	}
	json_decref(root);
	return rc;
}

int
ctr_split_container_id(const char *s, char *runtime, size_t rlen, char *id, size_t idlen)
{
	const char *sep = strstr(s, "://");
	if (!sep || (size_t)(sep - s) >= rlen || strlen(sep + 3) >= idlen || sep == s)
		return -1;
	memcpy(runtime, s, (size_t)(sep - s));
	runtime[sep - s] = 0;
	snprintf(id, idlen, "%s", sep + 3);
	if (!is_hex64(id))
		return -1;
	lower(id);
	return 0;
}
