/*
 * import: a perf.data or simpleperf capture read into the framed stream collect writes.
 *
 * The parser never exits: every function returns 0, or -1 with a one-line reason in
 * imp->err naming the byte offset, so the fuzz target and the unit tests can drive it.
 */
#ifndef RP_IMPORT_H
#define RP_IMPORT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "byteorder.h"
#include "ksymtab.h"
#include "stream.h"

#define IMP_MAX_ATTRS 256
#define IMP_MAX_TYPES 64       /* distinct skipped record types counted by name */
#define IMP_REC_MAX (1u << 26) /* simpleperf records may pass 64 KiB; bound a corrupt size */

enum imp_format { FMT_AUTO, FMT_PERF, FMT_SIMPLEPERF };

struct attr {
	uint32_t type, size;
	uint64_t config, period, sample_type, read_format, flags;
	uint64_t branch_sample_type, sample_regs_user;
	uint32_t sample_stack_user;
	/* Where a sample's TIME and ID are, and the size of the sample_id trailer of other
	 * records, from sample_type (attr_parse): every record needs one of them. */
	uint16_t time_at, id_at, sid_size;
	/* Where a sample's IP, TID, CPU and PERIOD are, and where the u64 fields before READ
	 * end: sample_parse reads them with one size check. */
	uint16_t ip_at, tid_at, cpu_at, period_at, fixed_end;
	int32_t clockid;
	char name[64];
	char base[64];           /* the name without a hybrid PMU: cpu_core/cycles/ is cycles */
	int group;               /* the first attr of the same event on another PMU, else itself */
	int selected;            /* its samples become the profile */
	uint64_t seen;           /* samples counted for the default choice */
	uint64_t nsamples;       /* samples delivered (PERF_SAMPLE_READ: one per value) */
};

/* Bytes of the capture: a whole mapped file, or a forward-only window over a pipe. */
struct src {
	const uint8_t *map;
	size_t size;            /* mapped: file size; pipe: bytes buffered so far */
	int fd;                 /* -1 when mapped */
	uint8_t *buf;
	size_t cap;
	uint64_t base;          /* pipe: file offset of buf[0] */
	int eof;
	int mapped;             /* map is ours to unmap */
	uint64_t released;      /* mapped: pages before this offset were given back */
};

struct idmap {
	uint64_t id;
	uint32_t attr;
};

/* PERF_SAMPLE_READ: the last value read per event id (and thread, for inherited counters),
 * so that each sample weighs the difference, as perf's deliver_sample_value does. */
struct readval {
	uint64_t id, tid, value;
	int used;
};

struct buildid {
	struct buildid *next;
	uint8_t len;
	uint8_t id[STREAM_BUILD_ID_MAX];
	char path[];
};

/* A queued record keeps its sort key beside the pointer: comparisons touch no record.
 * A record of a mapped capture is read in place later; others are copied.  Four words:
 * every record is copied into a run and out again. */
struct slot {
	uint64_t time, seq;
	const uint8_t *rec;
	uint32_t size;          /* at most IMP_REC_MAX */
	uint32_t copied;        /* rec is a copy, freed once handled */
};
/* A FIFO of records in time order: each CPU's buffer arrives sorted, so records mostly
 * extend one of a few such runs; the rest go to the heap. */
#define ORDER_RUNS 8
struct run {
	struct slot *v;         /* ring of cap (a power of two) slots */
	size_t head, n, cap;
	uint64_t last;          /* the newest record's time, while n > 0 */
};
struct order {
	struct run runs[ORDER_RUNS];
	/* The runs holding records, oldest first record first: the oldest record queued is
	 * live[0]'s or the heap's, and taking it moves that run a step or two at most. */
	struct run *live[ORDER_RUNS];
	size_t nruns;
	struct run *fill;       /* the run the previous record extended */
	struct slot *heap;
	size_t n, cap, bytes;   /* n: records in the heap */
	uint64_t seq, newest;
};

struct skipped {
	uint32_t type;
	uint64_t count;
};

/* User symbols of simpleperf's FILE section; strings point into imp.sp_file. */
#define USYM_UNKNOWN UINT64_MAX
struct usym_mod {
	const char *path;
	size_t plen;
	uint64_t min_vaddr, fo_min_vaddr; /* fo_min_vaddr USYM_UNKNOWN: older simpleperf */
};
struct usym_ent {
	uint32_t mod, len;
	uint64_t start;
	const char *name;
	size_t nlen;
};
struct usyms {
	struct usym_mod *mods;
	size_t nmods;
	struct usym_ent *syms;
	size_t n, cap;
};

/* Kernel symbols from /proc/kallsyms or --kallsyms FILE (kallsyms.c), sent as FR_KSYM
 * frames before the first sample whose kernel frames fall in each. */
struct kallsyms {
	int fd;                  /* --kallsyms FILE, or -1 */
	int proc_fd, notes_fd;   /* /proc/kallsyms and /sys/kernel/notes, or -1 */
	const char *file;        /* --kallsyms FILE's name for messages */
	int state;               /* 0 not loaded yet, 1 loaded, -1 none */
	struct ksymtab tab;      /* names point into strings */
	char *strings;
	int64_t delta;           /* capture address - table address (KASLR of another boot) */
	char why[200];           /* where the names came from, or why there are none */
#define KALLSYMS_SEEN 4096
	uint64_t seen[KALLSYMS_SEEN]; /* addresses looked up (+1; 0 is empty), by hash */
	/* Read ahead (kallsyms_begin): a thread reads and parses the table while samples are
	 * held in the output; the addresses they need wait in pend. */
	pthread_t reader;
	int reading;             /* the thread runs, or has not been joined */
	const char *name;        /* the table's name for messages */
	int read_fd;
	int parsed;              /* the thread's result: 0, or -1 (cannot read) */
	size_t zeros;
	uint64_t *pend;          /* addresses (the call's byte, capture's space) to name */
	size_t npend, cpend;
};

/* Process names and executables by pid, for the target frame (procs.c). */
#define PROCS_MAX 65536
struct procent {
	uint32_t pid;
	int used;
	char comm[16];
	char *exe;
};

/* A parsed sample (sample.c); pointers are into the record. */
struct body {
	uint64_t ip, period, time, nr, nbr, abi, stack_size, dyn_size;
	uint32_t pid, tid, cpu;
	int has_ip, has_period;
	const uint8_t *read;     /* PERF_SAMPLE_READ body, read_len bytes */
	size_t read_len;
	const uint8_t *chain;    /* nr u64 */
	const uint8_t *br;       /* nbr {from, to, flags} */
	const uint8_t *regs;     /* popcount(sample_regs_user) u64 when abi != 0 */
	const uint8_t *stack;    /* stack_size bytes, dyn_size of them valid */
};

struct readent {
	uint64_t value, id;
};

#define IMP_MAX_PMUS 32
struct pmu {
	uint32_t type;
	char name[32];
};

struct imp {
	/* Input. */
	struct src src;
	struct bo bo;
	int pipe_mode;
	enum imp_format format;
	const char *want_event;  /* --event NAME, or NULL for the default choice */
	/* Capture description. */
	struct attr attrs[IMP_MAX_ATTRS];
	size_t nattrs;
	struct idmap *ids;
	size_t nids, capids;
	int ids_sorted;
	int chosen;              /* attr index of the sampling event, -1 before the choice */
	int prepared;            /* names and groups set, --event matched */
	int counting;            /* the pass that only counts samples per event (file mode) */
	int counted;             /* that pass is done: seen holds every sample */
	struct pmu pmus[IMP_MAX_PMUS]; /* PMU_MAPPINGS: dynamic PMU types by name */
	size_t npmus;
	struct readval *reads;   /* open addressing, nreads of capreads (a power of two) */
	size_t nreads, capreads;
	/* The kernel: where its addresses start (perf's machine->kernel_start; 0 unknown)
	 * and its relocation symbol (the [kernel.kallsyms]_text map's name and pgoff). */
	uint64_t kernel_start;
	char kref_name[64];
	uint64_t kref_addr;
	struct kallsyms ks;
	struct procent *procs;   /* PROCS_MAX entries, allocated on first use */
	size_t nprocs;
	char osrelease[128], arch[64];
	uint32_t clockid;
	int have_clock_data;
	int64_t clock_offset;
	int simpleperf;          /* private records and sections seen or asked for */
	struct buildid *bids[1024];
	/* Symbols from simpleperf's FILE section, sent once the target is out; their strings
	 * point into sp_file, a copy of the section (a pipe source drops what it has read). */
	struct fr_ksym *ksyms;
	size_t nksyms;
	struct usyms usyms;
	char *sp_file;
	/* Output. */
	struct stream_writer out;
	int out_fd, opened, target_sent;
	uint64_t session_id;
	uint32_t e_machine;      /* of the capture's arch, set with the header */
	uint64_t max_time, round_time, last_round;
	uint32_t first_pid;
	uint64_t target_start;
	int retarget;            /* the target executed: a new target frame at its next sample */
	uint64_t unknown_id_samples, malformed;
	char notes[8][200];      /* sent as warnings at the end */
	size_t nnotes;
	struct skipped skipped[IMP_MAX_TYPES];
	size_t nskipped;
	/* Decompression of COMPRESSED records. */
	void *zctx;
	uint8_t *zbuf;
	size_t zlen, zcap;
	int in_z;
	uint64_t zoff;           /* file offset of the compressed record being read */
	struct order order;
	struct fr_sample sample;
	char err[300];
};

/* Opens the writer lazily: the header needs the arch and clock found in the capture. */
int imp_init(struct imp *m, int out_fd);
void imp_release(struct imp *m);
int imp_fail(struct imp *m, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* A line for the diagnostics, sent as a warning frame at the end. */
void imp_note(struct imp *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* src.c */
int src_open_fd(struct src *s, int fd, char *err, size_t errlen);
void src_open_mem(struct src *s, const uint8_t *p, size_t n);
/* n bytes at file offset off, or NULL past the end; a pipe source drops bytes before off. */
const uint8_t *src_get(struct src *s, uint64_t off, size_t n);
/* Nothing before off is read again: a mapped source gives those pages back. */
void src_done(struct src *s, uint64_t off);
void src_close(struct src *s);

/* perfdata.c: the whole capture, header to FR_END. */
int perfdata_run(struct imp *m);
/* One record (header included) at file offset off; nested = inside compressed data. */
int perfdata_record(struct imp *m, const uint8_t *r, size_t size, uint64_t off);
/* Size of the record whose 8-byte header is at r; 0 when the header is invalid. */
size_t perfdata_record_size(const struct imp *m, const uint8_t *r, uint32_t *type);

/* features.c: one feature payload (file section or pipe HEADER_FEATURE). */
int features_parse(struct imp *m, uint64_t feat, const uint8_t *p, size_t n, uint64_t off);
int features_add_buildid(struct imp *m, const uint8_t *r, size_t size);
int features_zero_id(const uint8_t *id, size_t n); /* all zeros: no build id */
const struct buildid *features_find_buildid(const struct imp *m, const char *path, size_t n);
int attr_parse(struct imp *m, const uint8_t *p, size_t n, uint64_t off, struct attr *a);
int ids_add(struct imp *m, uint64_t id, uint32_t attr);
int ids_find(struct imp *m, uint64_t id); /* attr index or -1 */
const char *attr_default_name(const struct imp *m, const struct attr *a, char *buf, size_t n);
const char *attr_generic_name(const struct attr *a, char *buf, size_t n);

/* simpleperf.c: the FILE and META_INFO sections and the private records. */
int simpleperf_file_section(struct imp *m, const uint8_t *p, size_t n, uint64_t off);
int simpleperf_meta_info(struct imp *m, const uint8_t *p, size_t n);
int simpleperf_record(struct imp *m, uint32_t type, const uint8_t *r, size_t size,
		      uint64_t off);

/* events.c: the event the profile holds.  prepare names and groups the events (and
 * applies --event); choose makes the default choice from the samples seen. */
int events_prepare(struct imp *m);
int events_choose(struct imp *m);
void events_unit(const struct imp *m, const char **type, const char **unit);

/* records.c: kernel records into frames. */
int records_handle(struct imp *m, uint32_t type, const uint8_t *r, size_t size);
void records_count_sample(struct imp *m, const uint8_t *r, size_t size);
int records_round(struct imp *m);
void records_skip(struct imp *m, uint32_t type);

/* finish.c: the closing warnings and the end frame. */
int records_finish(struct imp *m);
uint32_t records_frequency(const struct imp *m);

/* sample.c: a sample's fields; 0, or -1 when they do not fit the record. */
int sample_parse(const struct imp *m, const struct attr *a, const uint8_t *r, size_t size,
		 struct body *b);
size_t sample_read_size(const struct imp *m, const struct attr *a, const uint8_t *p,
			size_t left);
size_t sample_read_values(const struct imp *m, const struct attr *a, const struct body *b,
			  struct readent *out, size_t max);

/* stack.c: the sample's addresses (kernel leaf first, then user leaf first). */
void stack_build(struct imp *m, const struct attr *a, const struct body *b, uint16_t misc,
		 struct fr_sample *s);
int stack_ip_is_kernel(const struct imp *m, uint64_t ip, int header_kernel);

/* readval.c: PERF_SAMPLE_READ counts into per-sample weights. */
int readval_delta(struct imp *m, const struct attr *a, uint64_t id, uint32_t tid, uint64_t value,
		  uint64_t *delta);
void readval_release(struct imp *m);

/* procs.c: each process's name and executable, for the target frame. */
int procs_comm(struct imp *m, uint32_t pid, uint32_t tid, struct str comm, int exec);
int procs_exe(struct imp *m, uint32_t pid, struct str path);
const struct procent *procs_find(const struct imp *m, uint32_t pid);
void procs_release(struct imp *m);

/* kallsyms.c: names for the kernel frames.  The fds are opened by main before the stage
 * is confined (-1 each when not wanted; the fuzz target and the unit tests leave them). */
void kallsyms_init(struct kallsyms *k);
int kallsyms_frames(struct imp *m, const uint64_t *ips, size_t n);
/* Once the capture's features are read: starts reading the table on a thread when the
 * capture's kernel is named from one, so that its cost (the kernel formats 100,000 lines,
 * about a quarter of a big import) overlaps the import. */
void kallsyms_begin(struct imp *m);
/* Waits for that thread and writes the held output, its symbols first; 0 or -1. */
int kallsyms_finish(struct imp *m);
void kallsyms_note(struct imp *m);
void kallsyms_release(struct kallsyms *k);

/* out.c: the stream writer, the target frame and the closing warnings. */
int out_open(struct imp *m);
int out_target(struct imp *m, uint64_t time, uint32_t pid);
int out_retarget(struct imp *m);
int out_check(struct imp *m, int rc);

/* order.c: kernel records replayed in time order. */
int order_push(struct imp *m, uint64_t time, const uint8_t *r, size_t size, uint64_t off);
int order_release(struct imp *m, uint64_t time); /* handles every record at or before time */
void order_free(struct imp *m);
struct slot *reallocf_heap(struct order *o);
uint64_t records_time(struct imp *m, uint32_t type, const uint8_t *r, size_t size);

/* usym.c: FR_USYM frames for the user symbols of the FILE section. */
int usym_is_user(uint32_t sp_file_type);
int usym_module(struct imp *m, uint32_t type, const char *path, size_t plen, uint64_t min_vaddr,
		const uint8_t *tail, size_t tlen);
int usym_add(struct imp *m, uint64_t start, uint32_t len, const char *name, size_t nlen);
int usym_emit(struct imp *m);
void usym_release(struct imp *m);

/* zstd.c */
int zstd_feed(struct imp *m, const uint8_t *p, size_t n, uint64_t off);
int zstd_finish(struct imp *m);
void zstd_release(struct imp *m);

#endif
