/*
 * Uprobes made through tracefs (uprobe_events) and opened as tracepoint perf events, for
 * the heap program.  The kernel's uprobe PMU, which libbpf uses, refuses perf_event_open
 * without CAP_SYS_ADMIN (seen on Linux 6.18 with CAP_PERFMON and CAP_BPF held), while a
 * tracefs uprobe needs only write access to uprobe_events and CAP_PERFMON: collect can
 * attach the allocator probes again after an exec of the target with the capabilities it
 * keeps (docs/privileges.md).
 *
 * Each probe is an event of the group "rustprofile_<collect's pid>"; uprobe_remove takes
 * it out again, and uprobe_sweep takes out the groups of collects that are gone (killed
 * before they could remove theirs).
 */
#ifndef COLLECT_UPROBE_H
#define COLLECT_UPROBE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define UPROBE_NAME_MAX 64

struct uprobe {
	int fd;                         /* the perf event, -1 when none */
	char event[UPROBE_NAME_MAX];    /* "group/name" in tracefs */
};

/* Makes an entry (ret 0) or return (ret 1) probe at offset off of the file path, named
 * after name and a sequence number, and opens it for the threads of pid.  0, or -1 with a
 * one-line reason in why (the probe made is taken out again). */
int uprobe_open(struct uprobe *u, const char *path, uint64_t off, int ret, const char *name,
		pid_t pid, char *why, size_t whylen);
/* Closes the event (when the caller has not handed its fd on) and takes the probe out. */
void uprobe_remove(struct uprobe *u, int close_fd);
/* Takes out the probes of collects that no longer run. */
void uprobe_sweep(void);

#endif
