/* The cgroup v2 directory and init process of a resolved container (ctarget.h). */
#ifndef COLLECT_CTRCGROUP_H
#define COLLECT_CTRCGROUP_H

#include <sys/types.h>

#include "ctarget.h"

/* Docker: id->pid known; id->cgroup from its /proc/PID/cgroup.  0, or -1 with err. */
int ctr_task_cgroup(struct ctr_identity *id, char *err, size_t errlen);
/* Kubernetes: id->cgroup from the kubelet layouts, id->pid its init process.  0 or -1. */
int ctr_pod_cgroup(struct ctr_identity *id, char *err, size_t errlen);
/* The process of cgroup dir whose parent is outside it (the container's init); 0: none. */
pid_t ctr_init_pid(const char *dir);

#endif
