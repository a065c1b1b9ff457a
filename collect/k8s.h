/* Kubernetes Pod API targets (k8s.c); the common interface is ctarget.h. */
#ifndef COLLECT_K8S_H
#define COLLECT_K8S_H

#include "ctarget.h"

/* "NAMESPACE/NAME", both DNS-1123 names: 0, or -1. */
int k8s_split(const char *sel, char *ns, size_t nslen, char *name, size_t namelen);
int k8s_resolve(const char *sel, const char *want, struct ctr_identity *id, char *err,
		size_t errlen);
enum ctr_state k8s_follow(struct ctr_identity *id, pid_t old_pid, char *err, size_t errlen);

#endif
