/* The one entry of container targets (ctarget.h): the selector's kind picks the API. */
#include <string.h>

#include "ctarget.h"
#include "docker.h"
#include "errbuf.h"
#include "k8s.h"

int
ctr_resolve(const struct ctr_selector *sel, struct ctr_identity *id, char *err, size_t errlen)
{
	memset(id, 0, sizeof(*id));
	if (sel->kind == CTR_DOCKER)
		return docker_resolve(sel->docker, id, err, errlen);
	if (sel->kind == CTR_K8S)
		return k8s_resolve(sel->pod, sel->container, id, err, errlen);
	return errbuf_fail(err, errlen, "no container target selected");
}

enum ctr_state
ctr_follow(struct ctr_identity *id, pid_t old_pid, char *err, size_t errlen)
{
	err[0] = 0;
	return id->kind == CTR_DOCKER ? docker_follow(id, old_pid, err, errlen) :
		k8s_follow(id, old_pid, err, errlen);
}
