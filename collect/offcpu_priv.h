/* The state shared by collect/offcpu.c (loading) and collect/offcpu_drain.c (draining). */
#ifndef COLLECT_OFFCPU_PRIV_H
#define COLLECT_OFFCPU_PRIV_H

#include <linux/types.h>

#include "offcpu.h"
#include "offcpu_batch.h"
#include "offcpu_shared.h"
#include "stream.h"

_Static_assert(sizeof(struct offcpu_event) % 8 == 0, "ring records stay 8-byte aligned");
_Static_assert(sizeof(struct offcpu_start) % 8 == 0, "map values keep their layout");
_Static_assert(sizeof(struct offcpu_deep_event) % 8 == 0, "ring records stay 8-byte aligned");

/* A stack of the "stacks" map or the "ustacks" table, read once: an id never changes its
 * stack, since the program stores without BPF_F_REUSE_STACKID, takes only free slots of the
 * table, and nothing deletes. */
struct cached_stack {
	uint16_t n;
	int16_t skip;           /* own frames at the leaf of a kernel stack, -1: not known */
	uint8_t named;          /* its kernel symbols went out (before() saw it once) */
	uint64_t ips[];
};

/* Threads off the CPU at one drain, by tid: the start of their interval and how far it has
 * been reported (0: not yet). */
struct open_slot {
	uint32_t tid, gen;
	uint64_t until;
	struct offcpu_start s;
};
struct opentab {
	struct open_slot *slots;
	size_t cap;             /* a power of two, twice the program's thread limit */
	uint32_t gen;           /* slots of another generation are empty */
};

struct offcpu {
	struct offcpu_bpf *skel;
	struct ring_buffer *rb;
	int starts_fd, stacks_fd, ustacks_fd, counters_fd, ncpu;
	uint64_t min_ns;
	uint64_t deadline_ns;   /* 0: none */
	pid_t pid;              /* the target, for the task iterator */
	int cgroup;             /* the iterator keeps the tasks of the cgroup scope */
	int blocked;            /* the iterator is loaded (offcpu_blocked.c) */
	size_t (*own_frames)(void *arg, const uint64_t *ips, size_t n);
	void (*before)(void *arg, uint32_t pid, const uint64_t *kips, size_t n);
	void *arg;
	struct cached_stack *stacks[OFFCPU_STACK_SLOTS + OFFCPU_USTACK_SLOTS];
	struct opentab open[2]; /* this drain's threads, and the previous drain's */
	int cur;
	uint64_t counted[OFFCPU_C_MAX]; /* counter values already written as FR_LOST */
	uint64_t malformed;     /* ring records too short to be an event */
	struct emit *out;       /* during a drain */
	struct batches batches; /* this drain's pieces, by thread and stacks */
	struct fr_offcpu fr;    /* scratch */
	int deep_fd;
	struct offcpu_deep deep; /* scratch: the copy of an interval still open */
};

/* A finished interval from the ring buffer, with its stack copy or NULL: writes what was not
 * reported yet. */
void offcpu_finished(struct offcpu *o, const struct offcpu_event *e,
		     const struct offcpu_deep *deep);
/* The ring buffer's callback (ctx: the struct offcpu): one record, an offcpu_event or an
 * offcpu_deep_event; a shorter one is counted as malformed. */
int offcpu_ring_event(void *ctx, void *data, size_t len);

#endif
