/*
 * The Resource of the requests: what is known of the target (service.name, the
 * executable's path and name, process.pid as an integer, rustprofile.target.kind), then
 * the user's attributes (config.h), each replacing a detected one of the same key.
 * service.name is the executable's name unless the user names it.  Container and Pod
 * identity would join here; this build has no container targets.  Made again when a
 * target frame changes the target.
 */
#ifndef EO_RESOURCE_H
#define EO_RESOURCE_H

#include <stdint.h>

#include "config.h"
#include "pbtypes.h"

#define RESOURCE_MAX (16 + CONFIG_MAX_ATTRS)

struct resource_target {
	uint32_t pid;
	char kind[32], exe[4097], comm[64];
	/* A container target's identity (empty otherwise), as the target frame gives it. */
	char ctr_runtime[32], ctr_id[80], ctr_name[256];
	char k8s_ns[256], k8s_pod[256], k8s_uid[80];
};

struct resource {
	OtResource r;
	OtKeyValue kv[RESOURCE_MAX], *pkv[RESOURCE_MAX];
	OtAnyValue v[RESOURCE_MAX];
	char name[4097];        /* the executable's base name */
	OtScope scope;
};

void resource_build(struct resource *res, const struct config *c, const struct resource_target *t);

#endif
