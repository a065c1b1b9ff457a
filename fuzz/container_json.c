/* libFuzzer target: the decoders of the Docker Engine API's inspect answer, the Kubernetes
 * Pod object and both APIs' error bodies (collect/ctrjson.c, ctrpod.c), all answers of a
 * control plane collect trusts no more than any input.  The first byte picks the decoder and
 * the --container asked for; whatever is accepted must be a bounded, terminated identity
 * with a well-formed container ID. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../collect/ctarget.h"

static void
check_identity(const struct ctr_identity *id)
{
	if (strnlen(id->id, sizeof(id->id)) == sizeof(id->id) ||
	    strnlen(id->name, sizeof(id->name)) == sizeof(id->name) ||
	    strnlen(id->runtime, sizeof(id->runtime)) == sizeof(id->runtime) ||
	    strnlen(id->pod_uid, sizeof(id->pod_uid)) == sizeof(id->pod_uid) ||
	    strnlen(id->started_at, sizeof(id->started_at)) == sizeof(id->started_at) ||
	    (id->id[0] && strspn(id->id, "0123456789abcdef") != 64) || id->pid < 0)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const want[] = { NULL, "app", "init-db", "debugger" };
	struct ctr_identity id;
	char err[512], msg[256];

	if (size < 1)
		return 0;
	const char *json = (const char *)data + 1;
	size_t len = size - 1;
	switch (data[0] % 3) {
	case 0:
		if (ctr_docker_parse(json, len, &id, err, sizeof(err)) == 0)
			check_identity(&id);
		break;
	case 1:
		if (ctr_pod_parse(json, len, want[(data[0] / 3) % 4], &id, err, sizeof(err)) == 0)
			check_identity(&id);
		break;
	default:
		if (ctr_api_message(json, len, msg, sizeof(msg)) == 0 &&
		    (strnlen(msg, sizeof(msg)) == sizeof(msg) || strchr(msg, '\n')))
			abort();
		break;
	}
	if (strnlen(err, sizeof(err)) == sizeof(err))
		abort();
	return 0;
}
