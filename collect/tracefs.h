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

/* The offset of FIELD in the text of an event's format file, or -1 when it names no such
 * field (older kernels lack some). */
int tracefs_format_offset(const char *format, const char *field);
/* The same, read from TRACEFS_DIR/events/EVENT/format (EVENT: "sched/sched_process_exit"). */
int tracefs_event_field_offset(const char *event, const char *field);

#endif
