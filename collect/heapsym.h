/*
 * Which allocator of the target the heap probes attach to (manual: "Heap sampling and
 * allocator support").  The families are deliberately narrow:
 *
 *   rust    a mapped module (the executable first) defining the complete shim family
 *           __rust_alloc, __rust_alloc_zeroed, __rust_realloc, __rust_dealloc
 *   system  the executable itself, else a mapped glibc (libc.so.6) or dynamic musl
 *           (ld-musl-*, libc.musl-*) module, defining the complete malloc, calloc,
 *           realloc, free family; aligned_alloc and posix_memalign too when defined
 *
 * auto prefers rust.  A launched command has not mapped its libraries yet (it is stopped
 * at its first instruction): its libc is then the one its DT_NEEDED names, looked up in
 * the usual library directories of its root.
 */
#ifndef COLLECT_HEAPSYM_H
#define COLLECT_HEAPSYM_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

/* The functions a family may probe, by role. */
enum heap_fn {
	HF_MALLOC, HF_CALLOC, HF_REALLOC, HF_FREE, HF_ALIGNED_ALLOC, HF_POSIX_MEMALIGN,
	HF_RUST_ALLOC, HF_RUST_ALLOC_ZEROED, HF_RUST_REALLOC, HF_RUST_DEALLOC,
	HF_MAX,
};

struct heap_probe {
	char requested[8];          /* auto, rust, system */
	const char *detected;       /* "rust", "system" or NULL */
	char module[PATH_MAX];      /* the module probed (as the target maps it) */
	char open_path[PATH_MAX + 32]; /* the same, for us to open: /proc/PID/root/... */
	int complete;               /* the detected family's symbols were all defined */
	uint64_t offset[HF_MAX];    /* file offsets of the functions found, 0: absent */
	char reason[400];           /* why no family, or what fell back */
};

/* Looks for the family requested ("auto", "rust" or "system") in pid; fills p.  0 when a
 * family was found, -1 with p->reason otherwise. */
int heapsym_detect(pid_t pid, const char *requested, struct heap_probe *p);
/* The symbol names of the roles (for messages and the benchmark). */
const char *heapsym_name(enum heap_fn f);

#endif
