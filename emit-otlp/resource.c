#include "resource.h"

#include <stdio.h>
#include <string.h>

/* Sets key (replacing its earlier value); the strings must outlive the resource. */
static OtAnyValue *
put(struct resource *res, const char *key)
{
	size_t i;

	for (i = 0; i < res->r.n_attributes && strcmp(res->kv[i].key, key); i++)
		;
	if (i == RESOURCE_MAX)
		return NULL;
	if (i == res->r.n_attributes) {
		res->kv[i] = (OtKeyValue)OT_KEY_VALUE_INIT;
		res->kv[i].key = (char *)key;
		res->kv[i].value = &res->v[i];
		res->pkv[i] = &res->kv[i];
		res->r.n_attributes++;
	}
	res->v[i] = (OtAnyValue)OT_ANY_VALUE_INIT;
	return &res->v[i];
}

static void
put_str(struct resource *res, const char *key, const char *value)
{
	OtAnyValue *v = put(res, key);

	if (v) {
		v->value_case = OT_ANY_STRING;
		v->string_value = (char *)value;
	}
}

void
resource_build(struct resource *res, const struct config *c, const struct resource_target *t)
{
	const char *slash = strrchr(t->exe, '/');
	OtAnyValue *v;

	res->r = (OtResource)OT_RESOURCE_INIT;
	res->r.attributes = res->pkv;
	snprintf(res->name, sizeof(res->name), "%s", slash ? slash + 1 : t->exe);
	put_str(res, "service.name", res->name[0] ? res->name : t->comm[0] ? t->comm : "rustprofile");
	if (t->exe[0]) {
		put_str(res, "process.executable.path", t->exe);
		put_str(res, "process.executable.name", res->name);
	}
	if (t->pid && (v = put(res, "process.pid"))) {
		v->value_case = OT_ANY_INT;
		v->int_value = t->pid;
	}
	if (t->kind[0])
		put_str(res, "rustprofile.target.kind", t->kind);
	/* A container's identity under OpenTelemetry's semantic names (the labels emit-pprof
	 * puts on every sample); before OTEL_RESOURCE_ATTRIBUTES and the options, which may
	 * replace them. */
	if (t->ctr_id[0]) {
		put_str(res, "container.id", t->ctr_id);
		put_str(res, "container.runtime", t->ctr_runtime);
		put_str(res, t->k8s_pod[0] ? "k8s.container.name" : "container.name", t->ctr_name);
	}
	if (t->k8s_pod[0]) {
		put_str(res, "k8s.namespace.name", t->k8s_ns);
		put_str(res, "k8s.pod.name", t->k8s_pod);
		put_str(res, "k8s.pod.uid", t->k8s_uid);
	}
	for (size_t i = 0; i < c->nattrs; i++)
		put_str(res, c->attrs[i].key, c->attrs[i].value);
	res->scope = (OtScope)OT_SCOPE_INIT;
	res->scope.name = "rustprofile";
}
