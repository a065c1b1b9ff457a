/* Docker Engine API targets (docker.c); the common interface is ctarget.h. */
#ifndef COLLECT_DOCKER_H
#define COLLECT_DOCKER_H

#include "ctarget.h"

int docker_resolve(const char *ref, struct ctr_identity *id, char *err, size_t errlen);
enum ctr_state docker_follow(struct ctr_identity *id, pid_t old_pid, char *err,
			     size_t errlen);

#endif
