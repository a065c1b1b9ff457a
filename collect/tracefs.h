/*
 * tracefs at /sys/kernel/tracing (manual: "Docker and Kubernetes deployment"): a recording
 * checks for it and, when it is missing, mounts it there, which takes CAP_SYS_ADMIN (a
 * privileged container has it).  Without it the recording does not start.
 */
#ifndef COLLECT_TRACEFS_H
#define COLLECT_TRACEFS_H

#include <stddef.h>

#define TRACEFS_DIR "/sys/kernel/tracing"

/* 0 when tracefs is mounted at TRACEFS_DIR (*mounted: 1 when this call mounted it), or -1
 * with the manual's error in err. */
int tracefs_ensure(int *mounted, char *err, size_t errlen);

#endif
