/*
 * A core/v1 Pod object: its identity (namespace, name, UID, node, QoS class) and the one
 * application container a recording may select.  Only spec.containers are application
 * containers: an init container (a sidecar included) or an ephemeral one is never selected,
 * and a Pod with several application containers needs --container.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "ctarget.h"
#include "errbuf.h"

static const char *
str_of_key(json_t *obj, const char *key)
{
	json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;
	return json_is_string(v) ? json_string_value(v) : "";
}

static int
copy(char *dst, size_t len, const char *s)
{
	return snprintf(dst, len, "%s", s) < (int)len ? 0 : -1;
}

/* The entry of array `list` named name, or NULL. */
static json_t *
named(json_t *list, const char *name)
{
	size_t i;
	json_t *c;
	if (!json_is_array(list))
		return NULL;
	json_array_foreach(list, i, c)
		if (strcmp(str_of_key(c, "name"), name) == 0)
			return c;
	return NULL;
}

/* "a, b, c": the names of the application containers, for an error. */
static void
names_of(json_t *list, char *out, size_t len)
{
	size_t i, used = 0;
	json_t *c;
	out[0] = 0;
	json_array_foreach(list, i, c) {
		int n = snprintf(out + used, len - used, "%s%s", i ? ", " : "",
				 str_of_key(c, "name"));
		if (n < 0 || (size_t)n >= len - used)
			break;
		used += (size_t)n;
	}
}

/* The application container to profile, its name in id->name; -1 with err. */
static int
select_container(json_t *spec, const char *want, struct ctr_identity *id, char *err,
		 size_t errlen)
{
	char list[512];
	json_t *apps = json_object_get(spec, "containers");
	size_t n = json_is_array(apps) ? json_array_size(apps) : 0;
	names_of(apps, list, sizeof(list));
	if (!want) {
		if (n == 1)
			return copy(id->name, sizeof(id->name),
				    str_of_key(json_array_get(apps, 0), "name")) < 0 ?
				errbuf_fail(err, errlen, "the container's name is too long") : 0;
		if (n == 0)
			return errbuf_fail(err, errlen, "Pod %s/%s has no application container",
					   id->ns, id->pod);
		return errbuf_fail(err, errlen, "Pod %s/%s has %zu application containers (%s): "
				   "pass --container NAME", id->ns, id->pod, n, list);
	}
	if (named(apps, want))
		return copy(id->name, sizeof(id->name), want) < 0 ?
			errbuf_fail(err, errlen, "--container is too long") : 0;
	const char *what = named(json_object_get(spec, "initContainers"), want) ? "an init" :
		named(json_object_get(spec, "ephemeralContainers"), want) ? "an ephemeral" : NULL;
	if (what)
		return errbuf_fail(err, errlen, "container '%s' of Pod %s/%s is %s container: init "
				   "and ephemeral containers are not selected", want, id->ns,
				   id->pod, what);
	return errbuf_fail(err, errlen, "Pod %s/%s has no application container '%s' (it has: "
			   "%s)", id->ns, id->pod, want, list);
}

/* The selected container's status: running with its ID and start, or why not. */
static int
container_status(json_t *status, struct ctr_identity *id, char *err, size_t errlen)
{
	json_t *st = named(json_object_get(status, "containerStatuses"), id->name);
	json_t *state = json_is_object(st) ? json_object_get(st, "state") : NULL;
	json_t *running = json_is_object(state) ? json_object_get(state, "running") : NULL;
	const char *cid = str_of_key(st, "containerID");

	snprintf(id->status, sizeof(id->status), "%s", !st ? "unreported" :
		 json_is_object(running) ? "running" :
		 json_object_get(state, "terminated") ? "terminated" : "waiting");
	if (!json_is_object(running))
		return 0;
	if (ctr_split_container_id(cid, id->runtime, sizeof(id->runtime), id->id,
				   sizeof(id->id)) < 0)
		return errbuf_fail(err, errlen, "container '%s' has no usable containerID "
				   "(RUNTIME://64 hex digits)", id->name);
	if (copy(id->started_at, sizeof(id->started_at), str_of_key(running, "startedAt")) < 0)
		return errbuf_fail(err, errlen, "startedAt is too long");
	return 0;
}

int
ctr_pod_parse(const char *json, size_t len, const char *want, struct ctr_identity *id,
	      char *err, size_t errlen)
{
	json_error_t e;
	json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &e);
	if (!root)
		return errbuf_fail(err, errlen, "the Pod is not JSON: %s (line %d)", e.text, e.line);
	json_t *meta = json_object_get(root, "metadata"), *spec = json_object_get(root, "spec");
	json_t *status = json_object_get(root, "status");
	int rc = -1;
	memset(id, 0, sizeof(*id));
	id->kind = CTR_K8S;
	if (!json_is_object(root) || strcmp(str_of_key(root, "kind"), "Pod") != 0 ||
	    !json_is_object(meta) || !json_is_object(spec))
		errbuf_fail(err, errlen, "the answer is not a Pod object");
	else if (copy(id->ns, sizeof(id->ns), str_of_key(meta, "namespace")) < 0 ||
		 copy(id->pod, sizeof(id->pod), str_of_key(meta, "name")) < 0 ||
		 copy(id->pod_uid, sizeof(id->pod_uid), str_of_key(meta, "uid")) < 0 ||
		 !id->pod_uid[0] || strchr(id->pod_uid, '/') || strstr(id->pod_uid, ".."))
		errbuf_fail(err, errlen, "the Pod's metadata has no usable namespace, name and uid");
	else if (copy(id->node, sizeof(id->node), str_of_key(spec, "nodeName")) < 0 ||
		 copy(id->qos, sizeof(id->qos), str_of_key(status, "qosClass")) < 0)
		errbuf_fail(err, errlen, "the Pod's nodeName or qosClass is too long");
	else if (select_container(spec, want, id, err, errlen) == 0)
		rc = container_status(status, id, err, errlen);
	json_decref(root);
	return rc;
}
