/*
 * Temporary output files for atomic publication: the file is created beside its final name,
 * as "<dir>/.<final-name>.tmp-XXXXXX", written, fsynced and closed here; renaming it into
 * place is the commit stage's job.  On failure the writer unlinks it with tmpfile_discard.
 */
#ifndef RP_TMPFILE_H
#define RP_TMPFILE_H

#include <stddef.h>

struct tmpfile {
	int fd;                 /* -1 once closed */
	int created;            /* the file exists and is ours to unlink on failure */
	char *path;             /* heap: "<dir>/<name>" */
	const char *name;       /* points into path: the name inside dir */
	char err[300];
};

/* Creates the file (mode 0666 less the umask, like a plain create, close-on-exec).
 * 0, or -1 with t->err set; nothing to release after a failure. */
int tmpfile_create(struct tmpfile *t, const char *dir, const char *final_name);
/* Writes all n bytes; 0 or -1 with t->err. */
int tmpfile_write(struct tmpfile *t, const void *p, size_t n);
/* fsync and close; the file stays.  0 or -1 with t->err (the fd is closed either way). */
int tmpfile_finish(struct tmpfile *t);
/* Closes if open and removes the file; frees path.  Safe on a released or failed tmpfile. */
void tmpfile_discard(struct tmpfile *t);
/* Keeps the file (after tmpfile_finish handed it to someone else); its path is kept a
 * while, to remove it should the output break before a commit got its frame. */
void tmpfile_release(struct tmpfile *t);
/* Makes SIGTERM, SIGHUP and SIGPIPE remove the files this process created and has not yet
 * discarded or released (at most 16), before they end the process as usual, and so does
 * exit(): an emitter ended in the middle of a window, or stopped by an error after one
 * of its files was written, leaves no temporary file behind; when stdout has no reader
 * any more (SIGPIPE), the last 32 files handed on and not yet renamed go too.  (SIGKILL
 * cannot be caught: commit's end-of-run sweep removes what is left then.) */
void tmpfile_remove_on_term(void);

#endif
