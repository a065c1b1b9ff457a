/*
 * Which FR_EXIT ends a process (EXIT_PROCESS), so that the later stages can drop what they
 * keep for it.  The kernel reports every thread's exit alike.  The exit of the main thread
 * (tid == pid) ends the process unless /proc still lists another of its threads: a main
 * thread that called pthread_exit leaves a zombie leader behind while the others run on.
 * Such a process waits here, and the exit of the thread after which /proc lists none of
 * them ends it; a process whose last exits were lost ends when /proc no longer has it
 * (checked about once a second), with an FR_EXIT collect writes itself.
 */
#ifndef COLLECT_PROCEND_H
#define COLLECT_PROCEND_H

#include <stddef.h>
#include <stdint.h>

#include "emit.h"
#include "scope.h"
#include "u32set.h"

struct procend {
	struct u32set waiting;  /* processes whose main thread ended first */
	uint64_t next_check;    /* when to look for the waiting ones in /proc again */
};


/* The flags of the FR_EXIT of thread tid of process pid: EXIT_PROCESS or 0. */
uint32_t procend_exit(struct procend *p, uint32_t pid, uint32_t tid);
/* About once a second: writes an FR_EXIT flagged EXIT_PROCESS at now for each waiting
 * process /proc no longer shows with a thread other than its leader (and it leaves s). */
void procend_check(struct procend *p, uint64_t now, struct emit *out, struct scope *s);
void procend_free(struct procend *p);

#endif
