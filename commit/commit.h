/*
 * commit: state shared by its modules.
 *
 * window.c keeps what the stream announced (target, open windows, files, warnings) until a
 * window ends; publish.c turns an ended window into published files; diag.c writes the
 * diagnostics JSON of one window.  All strings here are heap copies owned by struct commit.
 */
#ifndef RP_COMMIT_H
#define RP_COMMIT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "stream.h"

/* A bound on memory, not on meaning: past it warnings are counted, not kept. */
#define COMMIT_MAX_WARNINGS 1000

struct commit_target {
	int have;
	uint32_t pid, cpu_frequency;
	char *kind, *exe, *comm, *kernel_release;
	char *unwind_requested, *unwind_mode, *unwind_reason;
	char *profiles;                 /* comma separated, as requested */
	uint32_t calib_samples, calib_mapped_permille, calib_deep_permille, calib_cycles;
	char *calib_verdict;            /* "" when no calibration ran */
	char *fallback_reason;          /* "" unless auto left frame pointers mid-recording */
	/* "process" or "cgroup" ("" from producers that predate them), the launch cgroup and
	 * why the scope fell back ("" when not) */
	char *scope_requested, *scope_effective, *scope_cgroup, *scope_reason;
	/* A container target's identity ("" otherwise): runtime, ID, name, start of the
	 * current process, and a Pod's namespace, name and UID. */
	char *ctr_runtime, *ctr_id, *ctr_name, *ctr_started_at, *k8s_ns, *k8s_pod, *k8s_uid;
	/* The heap side: whether the probes run (TARGET_HEAP), whether heap was requested at
	 * all (an alloc_interval), the allocator probe's report and the probes' scope. */
	int heap, heap_requested;
	char *allocator_requested, *allocator_detected, *allocator_module, *allocator_reason;
	uint32_t allocator_complete;
	char *heap_scope;
	/* The physical side: the tracepoints run (TARGET_PHYSICAL), at this percentage. */
	int physical;
	uint32_t physical_percent;
	/* The CPU profile's event, why it is not cycles, the CPUs sampled ("" for all). */
	char *cpu_event, *cpu_event_reason, *cpu_list;
};

/* An accepted file: name derived by commit, temp open (fd) and identified by dev/ino so
 * that the file renamed is the one that was checked. */
struct commit_file {
	uint32_t index, flags;
	char *kind, *name, *temp;
	int fd;
	uint64_t dev, ino;
};

struct commit_warning {
	uint64_t time;
	char *text;
};

struct commit_open {
	uint32_t index;
	uint64_t start, end;
};

/* The files of one published window, oldest first in struct commit.published. */
struct commit_published {
	char **names;
	size_t n;
};

/* One ended window on its way out: files in output order (pprof first), then diagnostics. */
struct commit_batch {
	const struct fr_window_end *end;
	struct commit_file *files;
	size_t nfiles;
	char **warnings;
	size_t nwarnings;
	char diag_name[256];
	char diag_temp[300];
};

struct modrefs_pending;

struct commit {
	const char *dir;                /* as given, without trailing slashes */
	int dirfd;
	uint32_t keep_windows;
	struct stream_header header;
	struct commit_target target;
	struct commit_open *open;
	size_t nopen, open_cap;
	struct commit_file *files;      /* announced, window not yet ended */
	size_t nfiles, files_cap;
	struct commit_warning *warnings; /* not yet given to a window */
	size_t nwarnings, warnings_cap;
	uint64_t warnings_dropped;
	struct commit_published *published;
	size_t npublished, published_cap;
	uint64_t *starts;               /* start of each ended window, by index */
	size_t nstarts, starts_cap;
	struct modrefs_pending *refs;   /* module lists of windows not yet published */
	size_t nrefs, caprefs;
};

/* window.c: bookkeeping.  The functions that can meet bad input return -1 with err set. */
void commit_set_target(struct commit *c, const struct fr_target *t);
void commit_add_warning(struct commit *c, const struct fr_warning *w);
int commit_window_start(struct commit *c, const struct fr_window_start *w, char *err,
			size_t errlen);
/* A file of the open window, accepted through commit_accept_file. */
int commit_add_file(struct commit *c, const struct fr_file *f, char *err, size_t errlen);
void commit_file_release(struct commit_file *f);
/* Takes the window's files and warnings out of c into b; -1 when it was never started. */
int commit_take_window(struct commit *c, const struct fr_window_end *we,
		       struct commit_batch *b, char *err, size_t errlen);
void commit_batch_release(struct commit_batch *b);
/* Unlinks the temp of every announced file of a window not yet published. */
void commit_remove_pending(struct commit *c);
void commit_release(struct commit *c);

/* accept.c: what commit acts on (docs/stream-format.md, "file").  commit_accept_file
 * checks f, a file of the window that starts at start (event time), and fills out; -1 with
 * err when its kind, flags, name or temporary file are not what an emitter of this run
 * announces for the window. */
int commit_accept_file(struct commit *c, const struct fr_file *f, uint64_t start,
		       struct commit_file *out, char *err, size_t errlen);
/* A FILE_DISCARD file of an ended window: removes its temporary file (checked as above;
 * one already gone is no error). */
int commit_discard_file(struct commit *c, const struct fr_file *f, char *err, size_t errlen);
/* 1 when temp (tlen bytes) is "." + name + ".tmp-" + six letters or digits. */
int commit_temp_of(const char *temp, size_t tlen, const char *name);
/* s with bytes outside printable ASCII as \xHH, so an error stays one line. */
void commit_quote(char *dst, size_t len, struct str s);

/* sweep.c: removes the temporary files of this session left in the output directory
 * (async-signal-safe once commit_sweep_init has run). */
void commit_sweep_init(int dirfd, uint64_t session_id);
void commit_sweep(void);
/* Makes SIGTERM, SIGHUP and SIGPIPE sweep before they end the process as usual. */
void commit_sweep_on_signals(void);
/* Blocks (1) or unblocks (0) those signals around work that must finish whole. */
void commit_sweep_block(int block);

/* diag.c: the diagnostics JSON of b; 0, or -1 with err set. */
int commit_diag_write(FILE *f, const struct commit *c, const struct commit_batch *b,
		      char *err, size_t errlen);

/* otlp.c: the name of an export status (emit-otlp/response.h), NULL for an unknown one,
 * and the final result of a window's export (FR_EXPORT, after the window was published):
 * its diagnostics rewritten in place (a new file renamed over it) with that status,
 * attempts, rejected profiles and error.  A window no longer retained is left alone.
 * 0, or -1 with err. */
const char *commit_otlp_status(unsigned status);
int commit_otlp_result(struct commit *c, const struct fr_export *x, char *err, size_t errlen);

/* publish.c: a new temporary file for name in the output directory, named as an emitter
 * names one (".NAME.tmp-" and six letters or digits, for the sweep), its name in temp;
 * the descriptor, or -1 with errno. */
int commit_create_temp(struct commit *c, const char *name, char *temp, size_t tlen);

/* publish.c: writes diagnostics, renames the window into place (all or nothing), applies
 * retention, then prints the wrote lines.  0, or -1 with err set and nothing of b left. */
int commit_publish(struct commit *c, struct commit_batch *b, char *err, size_t errlen);

/* Helpers shared by the modules. */
void *commit_xrealloc(void *p, size_t n, size_t size);
char *commit_xstrdup(struct str s);
int64_t commit_unix(const struct commit *c, uint64_t event_time);

#endif
