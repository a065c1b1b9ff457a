/*
 * The framed event stream between stages; the contract is docs/stream-format.md.
 *
 * A stream is a 48-byte header followed by frames: u32 type, u32 payload length, payload.
 * Everything is little-endian.  Readers check every length and count before using it and
 * report a truncated or corrupt stream through stream_reader.err, never by crashing.
 * Frames of unknown type are handed to the caller untouched so they can be forwarded.
 */
#ifndef RP_STREAM_H
#define RP_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "order.h"

#define STREAM_MAGIC "RPSTREAM"
#define STREAM_VERSION 1
#define STREAM_HEADER_SIZE 48
#define STREAM_BYTE_ORDER 0x01020304u
/* One frame holds at most one sample with 127 frames, a 64 KiB stack copy and registers,
 * or one symbol record; 16 MiB leaves room for growth and bounds a corrupt length. */
#define STREAM_MAX_FRAME (1u << 24)
#define STREAM_MAX_STR 4096     /* paths, names: longer is corrupt */
#define STREAM_MAX_IPS 512      /* raw callchain entries per sample */
#define STREAM_MAX_LOCS 256     /* resolved locations per stack (127 frames plus inlines) */
#define STREAM_MAX_LINES 64     /* inlined lines per location */
#define STREAM_MAX_STATS 128    /* key/value statistics per window end */
#define STREAM_BUILD_ID_MAX 20
#define STREAM_MAX_REGS 64      /* user registers per sample (one bit each of a u64 mask) */
#define STREAM_MAX_STACK 65528  /* user stack bytes per sample, perf's own limit */

enum frame_type {
	FR_TARGET = 1,
	FR_MMAP = 2,
	FR_COMM = 3,
	FR_FORK = 4,
	FR_EXIT = 5,
	FR_SAMPLE = 6,
	FR_LOST = 7,
	FR_KSYM = 8,
	FR_ROUND = 9,
	FR_TARGET_EXIT = 10,
	FR_END = 11,
	FR_WARNING = 12,
	FR_USYM = 13,
	FR_SAMPLE_REGS = 14,
	FR_OFFCPU = 15,
	FR_ALLOC = 16,
	FR_HEAP_FREE = 17,
	FR_HEAP_RESET = 18,
	FR_PAGE_ALLOC = 19,
	FR_MAPPING = 20,
	FR_FUNCTION = 21,
	FR_LOCATION = 22,
	FR_STACK = 23,
	FR_OFFCPU_STACK = 24,
	FR_HEAP_STACK = 25,
	FR_DEBUGINFOD = 26,
	FR_JIT = 27,
	FR_PAGE_STACK = 28,
	FR_PAGE_FREE = 29,
	FR_WINDOW_START = 30,
	FR_WINDOW_STACK = 31,
	FR_WINDOW_END = 32,
	FR_WINDOW_OFFCPU_STACK = 33,
	FR_FORGET = 34,
	FR_WINDOW_HEAP_STACK = 35,
	FR_WINDOW_PAGE_STACK = 36,
	FR_FILE = 40,
	FR_MODULES = 41,
	FR_EXPORT = 42,
};

struct stream_header {
	uint16_t version;
	uint32_t clockid;        /* clock of every event time in the stream */
	int64_t clock_offset_ns; /* unix_ns = event_time + clock_offset_ns */
	uint64_t session_id;
	uint32_t e_machine;      /* ELF machine of the target (EM_X86_64, EM_AARCH64) */
};

/* A string inside a decoded frame: not NUL-terminated, valid until the next read. */
struct str {
	const char *p;
	uint16_t len;
};

/* Raw frame as read: payload valid until the next stream_read. */
struct frame {
	uint32_t type;
	uint32_t len;
	const uint8_t *data;
};

#define TARGET_OFFCPU 1u /* flags: the off-CPU collector runs */
#define TARGET_HEAP 2u   /* flags: the allocator probes run (alloc, heap-free frames) */
#define TARGET_PHYSICAL 4u /* flags: the page allocator tracepoints run (page-* frames) */
struct fr_target {
	uint32_t pid;
	uint32_t cpu_frequency;
	uint64_t start_time;
	uint32_t flags;
	struct str kind;        /* "pid", "launch" */
	struct str exe;
	struct str comm;
	struct str unwind_requested;
	struct str unwind_mode;
	struct str unwind_reason;
	struct str profiles;    /* requested kinds, comma separated */
	struct str kernel_release;
	/* The frame-pointer calibration of --unwind auto (verdict empty when none ran). */
	uint32_t calib_samples, calib_mapped_permille, calib_deep_permille, calib_cycles;
	struct str calib_verdict; /* "accepted" or "rejected" */
	/* Appended: why auto mode left frame pointers after a window of poor stacks (empty
	 * otherwise), and the time from which this frame applies (0: from the start or the
	 * exec it follows). */
	struct str fallback_reason;
	uint64_t since;
	/* Appended: the processes covered, "process" or "cgroup", as requested and in
	 * effect, the launch cgroup's path and why the scope fell back (empty when none). */
	struct str scope_requested, scope_effective, scope_cgroup, scope_reason;
	/* Appended: the percentage of off-CPU switch-outs recorded (--offcpu-probability),
	 * 1..100; a frame without it records them all (100). */
	uint32_t offcpu_percent;
	/* Appended: the window length the recording was made with (collect's --window), which
	 * aggregate uses when it is given no --window; 0 (or absent): not recorded. */
	uint64_t window_nanos;
	/* Appended: what a sample's period counts, as a pprof value type ("cpu" and
	 * "nanoseconds" when empty or absent; an import of another event: "cycles", "count"). */
	struct str sample_type, sample_unit;
	/* Appended: a container target's identity (all empty otherwise): the runtime
	 * ("docker", "containerd", ...), the full container ID, its name (Docker) or the Pod's
	 * container name, when the current process of it started (RFC 3339, as the API says),
	 * and for a Pod its namespace, name and UID. */
	struct str container_runtime, container_id, container_name, container_started_at;
	struct str k8s_namespace, k8s_pod_name, k8s_pod_uid;
	/* Appended: the heap profile.  The mean sampling interval in bytes (--alloc-interval,
	 * the heap pprof's period; 0: no heap), the allocator probe (--allocator as asked,
	 * the family found, its module, whether its family was complete, and why not) and the
	 * processes the probes cover ("process"). */
	uint64_t alloc_interval;
	struct str allocator_requested, allocator_detected, allocator_module;
	uint32_t allocator_complete;
	struct str allocator_reason, heap_scope;
	/* Appended: the CPU profile's event ("cycles", the hardware cycles event in frequency
	 * mode, or "cpu-clock"), why it is not the cycles event ("" when it is), and the CPUs
	 * sampled (--cpuid, canonical "2,4-7"; "" for every online CPU).  All empty from
	 * producers that predate them and for imports. */
	struct str cpu_event, cpu_event_reason, cpu_list;
	/* Appended: the percentage of the target's page allocations sampled for the physical
	 * memory profiles (--physical-memory-probability, 1..100; which of physical-alloc and
	 * physical-usage were asked is in profiles); 0 (absent): no physical profile. */
	uint32_t physical_percent;
};

struct fr_mmap {
	uint64_t time;
	uint32_t pid, tid;
	uint64_t start, len, pgoff;
	uint32_t prot, flags;
	uint8_t build_id_len;
	uint8_t build_id[STREAM_BUILD_ID_MAX];
	struct str path;
};

#define COMM_EXEC 1u
struct fr_comm {
	uint64_t time;
	uint32_t pid, tid, flags;
	struct str comm;
};

/* FR_FORK and FR_EXIT.  flags (appended; 0 when absent, always 0 in FR_FORK):
 * EXIT_PROCESS on the exit of the last thread of a process. */
#define EXIT_PROCESS 1u
struct fr_task {
	uint64_t time;
	uint32_t pid, ppid, tid, ptid;
	uint32_t flags;
};

struct fr_sample {
	uint64_t time;
	uint32_t pid, tid, cpu;
	uint32_t reserved;            /* the frame's reserved bytes: written 0, never read */
	uint64_t period;
	uint16_t nkernel, nuser;
	uint64_t ips[STREAM_MAX_IPS]; /* kernel leaf-first, then user leaf-first */
};

enum lost_kind {
	LOST_RECORDS = 1,   /* the kernel dropped records: ring buffer full */
	LOST_MALFORMED = 2, /* records collect could not parse */
	LOST_THROTTLED = 3, /* sampling throttled by the kernel */
	LOST_OFFCPU_RING = 4,       /* off-CPU intervals lost: BPF ring buffer full */
	LOST_OFFCPU_INCOMPLETE = 5, /* off-CPU intervals without an end or a start slot */
	LOST_OFFCPU_FILTERED = 6,   /* off-CPU intervals below --offcpu-min-duration-us */
	LOST_OFFCPU_STACK = 7,      /* off-CPU stacks (kernel or user) that were not stored */
	LOST_OFFCPU_UNSAMPLED = 8,  /* switch-outs left out by --offcpu-probability */
	LOST_HEAP_RING = 9,         /* heap events lost: BPF ring buffer full */
	LOST_HEAP_EVICTED = 10,     /* samples not tracked as live: the live map was full */
	LOST_HEAP_UNFINISHED = 11,  /* allocator calls whose return never came */
	LOST_HEAP_STACK = 12,       /* allocation stacks the kernel could not walk or copy */
	LOST_PAGE_RING = 13,        /* page allocations or frees lost: BPF ring buffer full */
	LOST_PAGE_UNTRACKED = 14,   /* sampled page allocations not tracked: the table was full */
	LOST_PAGE_STACK = 15,       /* page allocation stacks the kernel could not walk */
};
struct fr_lost {
	uint64_t time;
	uint64_t count;
	uint32_t kind;
};

struct fr_ksym {
	uint64_t start, end;
	struct str name;
	struct str module;
};

struct fr_round {
	uint64_t time;
};

struct fr_target_exit {
	uint64_t time;
	uint32_t pid;
	int32_t status;
};

enum end_reason {
	END_DURATION = 1,
	END_SIGNAL = 2,
	END_TARGET_EXIT = 3,
	END_INPUT = 4,
};
struct fr_end {
	uint64_t time;
	uint32_t reason;
};

struct fr_warning {
	uint64_t time;
	struct str text;
};

/* A symbol the capture carried for a user module (simpleperf embeds them): start and end
 * are ELF virtual addresses of the module identified by build id, else by path. */
struct fr_usym {
	uint8_t build_id_len;
	uint8_t build_id[STREAM_BUILD_ID_MAX];
	struct str path;
	uint64_t start, end;
	struct str name;
	/* Appended (import): the module's lowest executable virtual address and its file
	 * offset, as the capture recorded them (all ones: not recorded); both 0 when absent. */
	uint64_t min_vaddr, fo_min_vaddr;
};

/* unwind's JIT symbol statistics (docs/jit.md), totals since the start of the stream: the
 * perf maps and jitdumps found, symbols read from them (dropped over the cap, names cut,
 * lines or records unusable), the times a process's files were read on after they grew,
 * and the locations in anonymous executable memory named from them or left unnamed. */
struct fr_jit {
	uint64_t time;
	uint32_t files;
	uint64_t symbols, dropped, truncated, malformed, rereads, named, unnamed;
};

/* A sample for DWARF unwinding: kernel frames as in FR_SAMPLE, the user registers perf
 * captured (reg_mask bits in perf's order for the abi's architecture) and a copy of the
 * user stack from the stack pointer up. */
struct fr_sample_regs {
	uint64_t time;
	uint32_t pid, tid, cpu;
	uint32_t abi;            /* PERF_SAMPLE_REGS_ABI_64 (2) or 0 when no user registers */
	uint64_t period;
	uint16_t nkernel;
	uint16_t nregs;
	uint64_t reg_mask;
	uint32_t stack_len;
	uint64_t kips[STREAM_MAX_IPS];
	uint64_t regs[STREAM_MAX_REGS];
	const uint8_t *stack;    /* points into the frame */
};

/* An off-CPU interval of one thread, or a piece of one (flags): from the switch-out at
 * start to the switch-in at end, with the stacks of the switch-out. */
enum offcpu_phase_id {
	PHASE_BLOCKED = 1,      /* waiting for something: sleep, I/O, lock */
	PHASE_PREEMPTED = 2,    /* runnable, preempted by the kernel */
	PHASE_YIELDED = 3,      /* runnable, entered the scheduler itself */
};
#define OFFCPU_CONTINUES 1u     /* the interval goes on after end (cut at a round) */
#define OFFCPU_CONTINUED 2u     /* the interval began before start (not its first piece) */
#define OFFCPU_NO_KSTACK 4u     /* the kernel stack was not stored */
#define OFFCPU_NO_USTACK 8u     /* the user stack was not stored */
/* Further intervals of the same thread, cpu, phase and stacks may follow a frame's own
 * (its "spans"), so a thread that waits at one place again and again costs the later stages
 * one frame per collect drain, not one per interval.  They are packed records of
 * OFFCPU_SPAN_BYTES (u64 start, u64 end, u32 flags: OFFCPU_CONTINUES/CONTINUED only; the
 * stack flags of the frame apply to all); read them with stream_offcpu_span(). */
#define OFFCPU_SPAN_BYTES 20
#define OFFCPU_SPAN_FLAGS (OFFCPU_CONTINUES | OFFCPU_CONTINUED)
#define STREAM_MAX_SPANS 65536  /* further intervals per frame */
struct offcpu_span {
	uint64_t start, end;
	uint32_t flags;
};
struct fr_offcpu {
	uint64_t start, end;
	uint32_t pid, tid, cpu, phase, flags;
	uint16_t nkernel, nuser;
	uint64_t ips[STREAM_MAX_IPS]; /* kernel leaf-first, then user leaf-first */
	uint32_t nmore;               /* further intervals ... */
	const uint8_t *more;          /* ... packed at more (into the frame when decoded) */
	/* The first ntop 8-byte words at the user stack pointer at each interval's switch-out
	 * (0: not recorded), packed little-endian, interval by interval: unwind finds there the
	 * return address that a frame-pointer walk misses when the leaf has no frame.  Read
	 * them with stream_offcpu_top(). */
	uint32_t ntop;
	const uint8_t *top;
	/* A copy of the user stack at the switch-out, from its stack pointer sp, with the frame
	 * pointer bp of then (nstack 0: none): for a frame of one interval whose frame-pointer
	 * walk stopped at the leaf; unwind walks it with the CFI, as a DWARF sample. */
	uint64_t sp, bp;
	uint32_t nstack;
	const uint8_t *stack;
};
/* One sampled allocation (collect): the block at addr of size bytes, standing for weight
 * allocations (a power of two), with its user stack: frame-pointer return addresses leaf
 * first (ips[0] is where the allocator returned to) and, under DWARF, the registers and a
 * copy of the user stack at that return (abi 0: none). */
#define ALLOC_UNTRACKED 1u      /* the live map was full: its free will not be seen */
#define ALLOC_NO_STACK 2u       /* the kernel could not walk the user stack */
struct fr_alloc {
	uint64_t time;
	uint32_t pid, tid;
	uint64_t addr, size, weight;
	uint32_t flags;
	uint16_t nuser;
	uint64_t ips[STREAM_MAX_IPS];
	uint32_t abi;
	uint16_t nregs;
	uint64_t reg_mask;
	uint32_t stack_len;
	uint64_t regs[STREAM_MAX_REGS];
	const uint8_t *stack;
};
/* A sampled block was freed (new_addr 0) or moved to new_addr by a realloc. */
struct fr_heap_free {
	uint64_t time;
	uint32_t pid, tid;
	uint64_t addr, new_addr;
};
/* The heap state of pid restarts at time: the target executed a new image, or the probes
 * were attached again (reason). */
enum heap_reset_reason {
	HEAP_RESET_EXEC = 1,
	HEAP_RESET_REATTACH = 2,
};
struct fr_heap_reset {
	uint64_t time;
	uint32_t pid, reason;
};
/* One sampled physical page allocation of the target (collect, bpf/physical.bpf.c): 2^order
 * pages from pfn, sampled with probability (--physical-memory-probability)/100, with the
 * allocating task's user stack by frame pointers, leaf first. */
#define PAGE_UNTRACKED 1u       /* the tracked-page table was full: its free will not be seen */
#define PAGE_NO_STACK 2u        /* the kernel could not walk the user stack */
#define STREAM_MAX_PAGE_ORDER 10 /* MAX_PAGE_ORDER of the kernels supported */
struct fr_page_alloc {
	uint64_t time;
	uint32_t pid, tid;
	uint64_t pfn;
	uint32_t order, flags;
	uint16_t nuser;
	uint64_t ips[STREAM_MAX_IPS];
};
/* Tracked pages of the owner pid were freed, from any context (kswapd, another task). */
struct fr_page_free {
	uint64_t time;
	uint32_t pid;
	uint64_t pfn;
	uint32_t order;
};
/* FR_PAGE_ALLOC resolved (unwind): location ids leaf first. */
struct fr_page_stack {
	uint64_t time;
	uint32_t pid, tid;
	uint64_t pfn;
	uint32_t order, flags, stack_flags;  /* PAGE_*, STACK_* */
	uint16_t nlocs;
	uint32_t locs[STREAM_MAX_LOCS];
};
/* FR_ALLOC resolved (unwind): location ids leaf first. */
struct fr_heap_stack {
	uint64_t time;
	uint32_t pid, tid;
	uint64_t addr, size, weight;
	uint32_t flags, stack_flags;  /* ALLOC_*, STACK_* */
	uint16_t nlocs;
	uint32_t locs[STREAM_MAX_LOCS];
};
/* What unwind's debuginfod client (--debuginfod) came to since the stage started: the
 * modules it asked the server for (queried), the fetches it started (a module asked for
 * once the budget is spent starts none), and how each ended; each frame replaces the one
 * before it.  The five outcomes add up to queried. */
struct fr_debuginfod {
	uint64_t queried, requests;
	uint64_t fetched, not_found, failed, out_of_time, oversized;
	uint64_t bytes_fetched;	/* the sizes of the files fetched */
};
/* One distinct allocation stack of a window (aggregate): the weighted allocations of the
 * window, and the weighted samples of it still live at the window's end (since attach). */
struct fr_window_heap_stack {
	uint32_t index;
	uint32_t pid, tid;
	uint64_t alloc_objects, alloc_space, inuse_objects, inuse_space;
	uint16_t nlocs;
	uint32_t locs[STREAM_MAX_LOCS];
};
/* One distinct page allocation stack of a window (aggregate): the window's sampled pages and
 * their bytes scaled by 100/probability (alloc_*), and the tracked pages of the stack still
 * allocated at the window's end, unscaled (usage_*). */
struct fr_window_page_stack {
	uint32_t index;
	uint32_t pid, tid;
	uint64_t alloc_pages, alloc_bytes, usage_pages, usage_bytes;
	uint16_t nlocs;
	uint32_t locs[STREAM_MAX_LOCS];
};

#define STREAM_MAX_TOP 16       /* stack-top words per interval */
#define STREAM_MAX_OFFCPU_STACK 4096 /* bytes of an off-CPU stack copy */
/* Word w of the stack top of interval i (0 the frame's own, 1..nmore its spans). */
uint64_t stream_offcpu_top(const struct fr_offcpu *v, uint32_t i, uint32_t w);

#define MAPPING_KERNEL 1u
#define MAPPING_HAS_FUNCTIONS 2u
#define MAPPING_HAS_FILENAMES 4u
#define MAPPING_HAS_LINES 8u
#define MAPPING_HAS_INLINES 16u
struct fr_mapping {
	uint32_t id, pid;
	uint64_t start, limit, offset;
	uint32_t flags;
	uint8_t build_id_len;
	uint8_t build_id[STREAM_BUILD_ID_MAX];
	struct str path;
};

struct fr_function {
	uint32_t id;
	uint32_t start_line;
	struct str name;
	struct str system_name;
	struct str filename;
};

struct fr_line {
	uint32_t function_id;
	uint32_t line;
};
struct fr_location {
	uint32_t id, mapping_id;
	uint64_t address;
	uint16_t nlines;
	struct fr_line lines[STREAM_MAX_LINES]; /* innermost inlined function first */
};

#define STACK_USABLE 1u
#define STACK_TRUNCATED 2u
#define STACK_EMPTY 4u
#define STACK_CYCLE 8u
#define STACK_OUT_OF_MAPPING 16u
#define STACK_UNWIND_FAILED 32u /* a DWARF walk that could not go on (not usable) */
struct fr_stack {
	uint64_t time;
	uint32_t pid, tid, cpu, flags;
	uint64_t period;
	uint16_t nlocs;
	uint32_t locs[STREAM_MAX_LOCS]; /* leaf first */
};

/* FR_OFFCPU resolved: location ids leaf first, the phase's root last. */
struct fr_offcpu_stack {
	uint64_t start, end;
	uint32_t pid, tid, cpu, phase, flags; /* flags: OFFCPU_* of the interval */
	uint32_t stack_flags;                 /* STACK_* */
	uint16_t nlocs;
	uint32_t locs[STREAM_MAX_LOCS];
	uint32_t nmore;                       /* further intervals, as in fr_offcpu */
	const uint8_t *more;
};

/* Interval i of a frame, 0 being the frame's own and 1..nmore its spans, with the frame's
 * stack flags (OFFCPU_NO_KSTACK, OFFCPU_NO_USTACK) merged into a span's. */
struct offcpu_span stream_offcpu_span(const struct fr_offcpu *v, uint32_t i);
struct offcpu_span stream_offcpu_stack_span(const struct fr_offcpu_stack *v, uint32_t i);
/* Stores span i of a spans buffer being built (flags: OFFCPU_SPAN_FLAGS only), and reads
 * it back. */
void stream_span_pack(uint8_t *spans, uint32_t i, const struct offcpu_span *s);
struct offcpu_span stream_span_unpack(const uint8_t *spans, uint32_t i);

struct fr_window_start {
	uint32_t index;
	uint64_t start, end; /* event clock; end is exclusive */
};

struct fr_window_stack {
	uint32_t index;
	uint32_t pid, tid;
	uint64_t count, nanos;
	uint16_t nlocs;
	uint32_t locs[STREAM_MAX_LOCS];
};

struct fr_stat {
	struct str key;
	uint64_t value;
};
enum window_reason {
	WINDOW_COMPLETE = 1,
	WINDOW_FINAL = 2,
};
struct fr_window_end {
	uint32_t index;
	uint64_t start, end;
	uint32_t reason;
	uint16_t nstats;
	struct fr_stat stats[STREAM_MAX_STATS];
};

/* No later frame refers to what it names: the n mappings (with the locations in them);
 * with tid 0 and pid not 0, the names of pid's threads; with tid not 0, the name of thread
 * tid of pid.  unwind lists the mappings it dropped, aggregate adds the names and passes
 * both on once no window can show them (docs/stream-format.md). */
#define STREAM_MAX_FORGET 65536 /* mappings per frame */
struct fr_forget {
	uint32_t pid, tid;
	uint32_t n;
	const uint8_t *ids;      /* n packed u32 mapping ids; read with stream_forget_id */
};
uint32_t stream_forget_id(const struct fr_forget *v, uint32_t i);

#define FILE_REQUIRED 1u
/* A file of a window published without it (fanout): commit removes the temporary file. */
#define FILE_DISCARD 2u
struct fr_file {
	uint32_t index;
	uint32_t flags;
	struct str kind;  /* "cpu", "svg-cpu", ... */
	struct str name;  /* final file name, relative to the output directory */
	struct str temp;  /* temporary file name in the output directory */
};

/* The build ids of the modules one window's profiles refer to (emit-pprof). */
#define STREAM_MAX_MODULES 65535
struct fr_bid {
	uint8_t len;
	uint8_t id[STREAM_BUILD_ID_MAX];
};
struct fr_modules {
	uint32_t index;
	uint16_t n;
	const uint8_t *ids;      /* n packed bids (u8 len, 20 bytes); read with stream_module */
};

/* The OTLP export result of a window published earlier (emit-otlp): status 2 exported,
 * 3 partial, 4 failed (emit-otlp/response.h); commit records it in that window's
 * diagnostics. */
struct fr_export {
	uint32_t index;
	uint32_t status;
	uint32_t attempts;
	uint64_t rejected;
	struct str error;       /* sanitized, empty for none */
};
/* Build id i of a decoded FR_MODULES. */
struct fr_bid stream_module(const struct fr_modules *v, uint16_t i);

/* Reading. */
struct stream_reader {
	int fd;
	const char *name;
	uint8_t *buf;
	size_t cap, len, pos;
	uint64_t offset;        /* stream offset of the next unread byte */
	int eof;
	int seen_end;           /* an FR_END frame was read: the producer finished */
	char err[200];
	/* A regular file is mapped instead of copied (buf then points into the mapping):
	 * what was mapped is read in place, what the file gains later through read(). */
	uint8_t *map;
	size_t map_len;         /* bytes mapped, from file offset 0 */
	size_t map_skip;        /* buf - map: the file offset the stream started at */
	size_t released;        /* pages of the mapping before this were given back */
	/* A stage's output, flushed before each read() of more input: what the stage wrote
	 * never waits in a buffer while the stage waits for input (live windows publish on
	 * time).  NULL: nothing to flush.  A failed flush is reported as a read error. */
	struct stream_writer *flush_on_wait;
	/* The order and repetition rules (lib/order.h): a stage sets order.rules after
	 * stream_reader_open; a frame that breaks one is a read error. */
	struct stream_order order;
};

/* Exit statuses that tell a driver a stage only echoes the failure of another: its reader
 * stopped (the write failed with EPIPE), or its input ended early (the writer stopped). */
#define STREAM_EXIT_READER_GONE 3
#define STREAM_EXIT_INPUT_ENDED 4

/* The exit status for a failed read of r: STREAM_EXIT_INPUT_ENDED when the input ended
 * inside a frame or the header, STREAM_EXIT_READER_GONE when the flush of the stage's
 * output before the read found its reader gone, else 1. */
int stream_reader_status(const struct stream_reader *r);

/* Reads and checks the header.  0 on success, -1 with r->err set. */
int stream_reader_open(struct stream_reader *r, int fd, const char *name,
		       struct stream_header *h);
/* 1: a frame, valid until the next call; 0: clean end of input at a frame boundary;
 * -1: error in r->err. */
int stream_read(struct stream_reader *r, struct frame *f);
void stream_reader_release(struct stream_reader *r);

/* Writing: buffered; frames are written whole. */
struct stream_writer {
	int fd;
	const char *name;
	uint8_t *buf;
	size_t cap, len;
	uint8_t *scratch;       /* payload encoding buffer */
	size_t scratch_cap;
	int errnum;             /* errno of the failed write, 0 for other errors */
	char err[200];
	int hold;               /* stream_hold: frames stay in buf, which grows */
};

int stream_writer_open(struct stream_writer *w, int fd, const char *name,
		       const struct stream_header *h);
/* The exit status for a failed write to w: STREAM_EXIT_READER_GONE on EPIPE, else 1. */
int stream_writer_status(const struct stream_writer *w);
int stream_write(struct stream_writer *w, uint32_t type, const void *payload, uint32_t len);
/* The payload of a frame of type and len bytes, its header written, in what w's buffer has
 * left, for the caller to fill in; NULL when it does not fit there (stream_write it).  len is
 * at most STREAM_MAX_FRAME. */
uint8_t *stream_frame_room(struct stream_writer *w, uint32_t type, uint32_t len);
int stream_forward(struct stream_writer *w, const struct frame *f);
int stream_flush(struct stream_writer *w);
/* Holding: stream_hold writes what is buffered; from then on, frames stay in memory (nothing is written, stream_flush
 * included; the caller bounds how much it writes meanwhile), until stream_unhold, which calls
 * first(w, ctx) to write frames that go out ahead of the held ones, then writes them all.
 * import holds its output while a thread reads the kernel's symbols, which must precede the
 * samples that need them.  0, or -1 with w->err. */
int stream_hold(struct stream_writer *w);
int stream_unhold(struct stream_writer *w, int (*first)(struct stream_writer *w, void *ctx),
		  void *ctx);
void stream_writer_release(struct stream_writer *w);

/* Typed encoders: each writes one frame; 0 or -1 with w->err. */
int stream_put_target(struct stream_writer *w, const struct fr_target *v);
int stream_put_mmap(struct stream_writer *w, const struct fr_mmap *v);
int stream_put_comm(struct stream_writer *w, const struct fr_comm *v);
int stream_put_task(struct stream_writer *w, uint32_t type, const struct fr_task *v);
int stream_put_sample(struct stream_writer *w, const struct fr_sample *v);
int stream_put_lost(struct stream_writer *w, const struct fr_lost *v);
int stream_put_ksym(struct stream_writer *w, const struct fr_ksym *v);
int stream_put_round(struct stream_writer *w, const struct fr_round *v);
int stream_put_target_exit(struct stream_writer *w, const struct fr_target_exit *v);
int stream_put_end(struct stream_writer *w, const struct fr_end *v);
int stream_put_warning(struct stream_writer *w, const struct fr_warning *v);
int stream_put_usym(struct stream_writer *w, const struct fr_usym *v);
int stream_put_jit(struct stream_writer *w, const struct fr_jit *v);
int stream_put_sample_regs(struct stream_writer *w, const struct fr_sample_regs *v);
int stream_put_mapping(struct stream_writer *w, const struct fr_mapping *v);
int stream_put_function(struct stream_writer *w, const struct fr_function *v);
int stream_put_location(struct stream_writer *w, const struct fr_location *v);
int stream_put_stack(struct stream_writer *w, const struct fr_stack *v);
int stream_put_window_start(struct stream_writer *w, const struct fr_window_start *v);
int stream_put_window_stack(struct stream_writer *w, const struct fr_window_stack *v);
int stream_put_window_end(struct stream_writer *w, const struct fr_window_end *v);
int stream_put_file(struct stream_writer *w, const struct fr_file *v);
/* FR_FORGET with v's pid and tid and the v->n mapping ids at ids (v->ids is not read). */
int stream_put_forget(struct stream_writer *w, const struct fr_forget *v, const uint32_t *ids);
/* FR_MODULES of window index: n build ids (at most STREAM_MAX_MODULES). */
int stream_put_modules(struct stream_writer *w, uint32_t index, const struct fr_bid *ids,
		       uint16_t n);
int stream_put_offcpu(struct stream_writer *w, const struct fr_offcpu *v);
int stream_put_export(struct stream_writer *w, const struct fr_export *v);
int stream_put_offcpu_stack(struct stream_writer *w, const struct fr_offcpu_stack *v);
/* FR_WINDOW_OFFCPU_STACK: the layout of FR_WINDOW_STACK; count is intervals. */
int stream_put_window_offcpu_stack(struct stream_writer *w, const struct fr_window_stack *v);
int stream_put_alloc(struct stream_writer *w, const struct fr_alloc *v);
int stream_put_heap_free(struct stream_writer *w, const struct fr_heap_free *v);
int stream_put_heap_reset(struct stream_writer *w, const struct fr_heap_reset *v);
int stream_put_heap_stack(struct stream_writer *w, const struct fr_heap_stack *v);
int stream_put_window_heap_stack(struct stream_writer *w, const struct fr_window_heap_stack *v);
int stream_put_page_alloc(struct stream_writer *w, const struct fr_page_alloc *v);
int stream_put_page_free(struct stream_writer *w, const struct fr_page_free *v);
int stream_put_page_stack(struct stream_writer *w, const struct fr_page_stack *v);
int stream_put_window_page_stack(struct stream_writer *w, const struct fr_window_page_stack *v);
int stream_put_debuginfod(struct stream_writer *w, const struct fr_debuginfod *v);

/* Typed decoders: 0, or -1 with a reason in err (size errlen).  Strings point into the
 * frame.  Trailing bytes after the known fields are ignored, so fields can be appended. */
int stream_get_target(const struct frame *f, struct fr_target *v, char *err, size_t errlen);
int stream_get_mmap(const struct frame *f, struct fr_mmap *v, char *err, size_t errlen);
int stream_get_comm(const struct frame *f, struct fr_comm *v, char *err, size_t errlen);
int stream_get_task(const struct frame *f, struct fr_task *v, char *err, size_t errlen);
int stream_get_sample(const struct frame *f, struct fr_sample *v, char *err, size_t errlen);
int stream_get_lost(const struct frame *f, struct fr_lost *v, char *err, size_t errlen);
int stream_get_ksym(const struct frame *f, struct fr_ksym *v, char *err, size_t errlen);
int stream_get_round(const struct frame *f, struct fr_round *v, char *err, size_t errlen);
int stream_get_target_exit(const struct frame *f, struct fr_target_exit *v, char *err,
			   size_t errlen);
int stream_get_end(const struct frame *f, struct fr_end *v, char *err, size_t errlen);
int stream_get_warning(const struct frame *f, struct fr_warning *v, char *err, size_t errlen);
int stream_get_usym(const struct frame *f, struct fr_usym *v, char *err, size_t errlen);
int stream_get_jit(const struct frame *f, struct fr_jit *v, char *err, size_t errlen);
int stream_get_sample_regs(const struct frame *f, struct fr_sample_regs *v, char *err,
			   size_t errlen);
int stream_get_mapping(const struct frame *f, struct fr_mapping *v, char *err, size_t errlen);
int stream_get_function(const struct frame *f, struct fr_function *v, char *err, size_t errlen);
int stream_get_location(const struct frame *f, struct fr_location *v, char *err, size_t errlen);
int stream_get_stack(const struct frame *f, struct fr_stack *v, char *err, size_t errlen);
int stream_get_window_start(const struct frame *f, struct fr_window_start *v, char *err,
			    size_t errlen);
int stream_get_window_stack(const struct frame *f, struct fr_window_stack *v, char *err,
			    size_t errlen);
int stream_get_window_end(const struct frame *f, struct fr_window_end *v, char *err,
			  size_t errlen);
int stream_get_file(const struct frame *f, struct fr_file *v, char *err, size_t errlen);
int stream_get_forget(const struct frame *f, struct fr_forget *v, char *err, size_t errlen);
int stream_get_modules(const struct frame *f, struct fr_modules *v, char *err, size_t errlen);
int stream_get_offcpu(const struct frame *f, struct fr_offcpu *v, char *err, size_t errlen);
int stream_get_export(const struct frame *f, struct fr_export *v, char *err, size_t errlen);
int stream_get_offcpu_stack(const struct frame *f, struct fr_offcpu_stack *v, char *err,
			    size_t errlen);
int stream_get_window_offcpu_stack(const struct frame *f, struct fr_window_stack *v,
				   char *err, size_t errlen);
int stream_get_alloc(const struct frame *f, struct fr_alloc *v, char *err, size_t errlen);
int stream_get_heap_free(const struct frame *f, struct fr_heap_free *v, char *err,
			 size_t errlen);
int stream_get_heap_reset(const struct frame *f, struct fr_heap_reset *v, char *err,
			  size_t errlen);
int stream_get_heap_stack(const struct frame *f, struct fr_heap_stack *v, char *err,
			  size_t errlen);
int stream_get_window_heap_stack(const struct frame *f, struct fr_window_heap_stack *v,
				 char *err, size_t errlen);
int stream_get_page_alloc(const struct frame *f, struct fr_page_alloc *v, char *err,
			  size_t errlen);
int stream_get_page_free(const struct frame *f, struct fr_page_free *v, char *err,
			 size_t errlen);
int stream_get_page_stack(const struct frame *f, struct fr_page_stack *v, char *err,
			  size_t errlen);
int stream_get_window_page_stack(const struct frame *f, struct fr_window_page_stack *v,
				 char *err, size_t errlen);
int stream_get_debuginfod(const struct frame *f, struct fr_debuginfod *v, char *err,
			  size_t errlen);

/* Decodes any known frame type fully (for validation); unknown types succeed. */
int stream_check_frame(const struct frame *f, char *err, size_t errlen);
const char *stream_frame_name(uint32_t type);

/* The unix time of an event time: event_time + clock_offset_ns, wrapping around (never
 * overflowing) for the nonsense times of a corrupt stream. */
int64_t stream_unix_ns(uint64_t event_time, int64_t clock_offset_ns);

/* A heap copy of s, NUL-terminated; NULL when out of memory. */
char *str_dup(struct str s);
int str_eq(struct str s, const char *c);
/* A C string as a stream string, cut to the longest a frame may hold. */
struct str str_of(const char *s);

#endif
