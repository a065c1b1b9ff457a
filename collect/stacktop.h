/*
 * stacktop: DWARF mode's stack copies cut where the main thread's stack begins.
 *
 * The kernel copies up to 16 KiB of user stack from sp, and stops early only at the end of
 * the stack's mapping.  A process's first thread starts at mm->start_stack (the 28th field
 * of /proc/PID/stat), where argc lies; above it are argv, the environment and the auxiliary
 * vector, which no frame ever uses.  A shallow stack of the main thread is therefore a copy
 * of mostly these (6 KiB of deep_nofp's 6.5 KiB started from a shell; with an environment
 * over about 12 KiB a whole 16 KiB), written into the stream at every sample and mapped
 * again by unwind.  The copy is cut 8 bytes past start_stack, after argc.
 *
 * The cut is made only where the bytes prove it: at start_stack the copy holds argc (1 to
 * what fits), argv's pointers and the NULL after them, and argv[0] points above them.  A
 * start_stack read after an exec, or of a reused pid, is judged by the same bytes, so a
 * sample of another image is left whole, never cut short.  Other threads' stacks (mmap'd,
 * below the main stack, with the thread's control block above their first frame) never
 * reach start_stack and are left as the kernel copied them.
 */
#ifndef COLLECT_STACKTOP_H
#define COLLECT_STACKTOP_H

#include <stddef.h>
#include <stdint.h>

#include "idmap.h"

#define STACKTOP_MAX_PROCESSES 65536 /* beyond, the table starts again (re-read from /proc) */
#define STACKTOP_ARGS_MAX (1ull << 30) /* argv[0] lies this far above argc at most */

struct stacktop {
	struct idmap slot;      /* pid -> its index in top */
	uint64_t *top;          /* start_stack of each process (0: none; all ones: unread) */
	size_t n, cap;
	uint32_t last_pid;      /* the last lookup's (0: none), whose top is last_top */
	uint64_t last_top;
	uint64_t cut_samples, cut_bytes;
};

/* The length to keep of a copy of len bytes taken at sp, given the process's start_stack
 * top (0: unknown): len itself unless the bytes at top are argc and argv as above. */
uint32_t stacktop_cut(uint64_t sp, const uint8_t *stack, uint32_t len, uint64_t top);
/* The same for a sample of pid, reading its start_stack from /proc at its first sample. */
uint32_t stacktop_trim(struct stacktop *t, uint32_t pid, uint64_t sp, const uint8_t *stack,
		       uint32_t len);
/* pid ran exec or ended: its start_stack is read again when needed. */
void stacktop_forget(struct stacktop *t, uint32_t pid);
void stacktop_free(struct stacktop *t);

#endif
