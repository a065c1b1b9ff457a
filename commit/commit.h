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
};

struct commit_file {
	uint32_t index, flags;
	char *kind, *name, *temp;
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
	char diag_temp[64];
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
	struct modrefs_pending *refs;   /* module lists of windows not yet published */
	size_t nrefs, caprefs;
};

/* window.c: bookkeeping.  The functions that can meet bad input return -1 with err set. */
void commit_set_target(struct commit *c, const struct fr_target *t);
void commit_add_warning(struct commit *c, const struct fr_warning *w);
int commit_window_start(struct commit *c, const struct fr_window_start *w, char *err,
			size_t errlen);
int commit_add_file(struct commit *c, const struct fr_file *f, char *err, size_t errlen);
/* A FILE_DISCARD file: removes its temporary file (a warning on stderr if that fails). */
int commit_discard_file(struct commit *c, const struct fr_file *f, char *err, size_t errlen);
/* Takes the window's files and warnings out of c into b; -1 when it was never started. */
int commit_take_window(struct commit *c, const struct fr_window_end *we,
		       struct commit_batch *b, char *err, size_t errlen);
void commit_batch_release(struct commit_batch *b);
/* Unlinks the temp of every announced file of a window not yet published. */
void commit_remove_pending(struct commit *c);
void commit_release(struct commit *c);

/* diag.c: the diagnostics JSON of b; 0, or -1 with err set. */
int commit_diag_write(FILE *f, const struct commit *c, const struct commit_batch *b,
		      char *err, size_t errlen);

/* publish.c: writes diagnostics, renames the window into place (all or nothing), applies
 * retention, then prints the wrote lines.  0, or -1 with err set and nothing of b left. */
int commit_publish(struct commit *c, struct commit_batch *b, char *err, size_t errlen);

/* Helpers shared by the modules. */
void *commit_xrealloc(void *p, size_t n, size_t size);
char *commit_xstrdup(struct str s);
int64_t commit_unix(const struct commit *c, uint64_t event_time);

#endif
