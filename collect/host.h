/*
 * record --host: every process of the machine (peer guide, "C, C++, and Go": the host
 * scope).  The events are one per CPU on every task (pid -1), sampling and side-band
 * together, so their cost and memory follow the CPUs, not the threads: --max-threads does
 * not apply.  The processes that exist at the start are read from /proc, at most
 * HOST_MAX_PROCESSES of them (the rest is a warning with its count; their samples keep
 * addresses only); later ones announce themselves with their own records.  The idle task
 * is not sampled.  docs/host.md lists every bound.
 */
#ifndef COLLECT_HOST_H
#define COLLECT_HOST_H

#include <stddef.h>
#include <sys/types.h>

/* The default pid_max of a 64-bit kernel is 4194304; a busy host runs a few thousand. */
#define HOST_MAX_PROCESSES 32768

/* fn(arg, pid) for every process in /proc, up to HOST_MAX_PROCESSES; returns how many more
 * there were (not handed to fn). */
size_t host_each_process(void (*fn)(void *arg, pid_t pid), void *arg);

#endif
