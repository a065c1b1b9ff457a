/*
 * The name each thread goes by, as the stream last said (comm records, and the names read
 * from /proc): a fork or a new thread makes no comm record of its own, so the new task's
 * name (its creator's) is written from here at its FORK, and every process, forked or
 * executed, carries a thread name.
 */
#ifndef COLLECT_NAMES_H
#define COLLECT_NAMES_H

#include <stddef.h>
#include <stdint.h>

#define NAMES_LEN 16 /* the kernel's TASK_COMM_LEN */

struct names {
	struct name_slot {
		uint32_t tid;           /* 0: free */
		char comm[NAMES_LEN];   /* NUL-terminated */
		uint64_t time;          /* of the record that set it */
	} *v;
	size_t n, cap;                  /* cap is 0 or a power of two */
};

/* tid goes by comm (len bytes, cut at NAMES_LEN - 1) from time on. */
void names_set(struct names *t, uint32_t tid, const char *comm, size_t len, uint64_t time);
/* tid's name, or NULL when the stream never named it. */
const char *names_get(const struct names *t, uint32_t tid);
/* Whether tid was named at or after time: the rings of the CPUs are drained one after the
 * other, so a new thread's own name (prctl) can come before its FORK. */
int names_set_since(const struct names *t, uint32_t tid, uint64_t time);
void names_free(struct names *t);

#endif
