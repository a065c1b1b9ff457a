/*
 * Shared by the libFuzzer targets that run a stage's own code in-process (included once by
 * each target, before the stage's sources).
 *
 * A stage reports bad input with err()/errx() and exits; exiting would end the fuzzer, so
 * this file defines them (and the warnings, kept quiet) in the target itself: the
 * executable's definitions take the place of the C library's for every object linked in.
 * They jump back to the FUZZ_TRY that is running, where the target releases what the stage
 * held, so an input that ends in a one-line error is a clean run and anything it leaked
 * still shows.  The same outside a FUZZ_TRY is a bug of the target: it aborts.
 */
#ifndef RP_FUZZ_H
#define RP_FUZZ_H

#include <dirent.h>
#include <err.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static jmp_buf fuzz_jump;
static int fuzz_armed;
static int fuzz_quiet = 1;      /* FUZZ_VERBOSE=1 in the environment prints the errors */

/* Runs stmt, which ends there or where the stage gives up with err()/errx()/exit().  The
 * caller's locals that stmt changes must be static or volatile (setjmp). */
#define FUZZ_TRY(stmt)                                                               \
	do {                                                                         \
		if (setjmp(fuzz_jump) == 0) {                                        \
			fuzz_armed = 1;                                              \
			stmt;                                                        \
			fuzz_armed = 0;                                              \
		}                                                                    \
	} while (0)

static void __attribute__((noreturn, unused))
fuzz_jump_back(void)
{
	if (!fuzz_armed)
		abort();
	fuzz_armed = 0;
	longjmp(fuzz_jump, 1);
}

static void __attribute__((noreturn))
fuzz_bail(const char *fmt, va_list ap)
{
	if (!fuzz_quiet) {
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
	fuzz_jump_back();
}

void
verrx(int status, const char *fmt, va_list ap)
{
	(void)status;
	fuzz_bail(fmt, ap);
}

void
errx(int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	verrx(status, fmt, ap);
}

void
verr(int status, const char *fmt, va_list ap)
{
	(void)status;
	fuzz_bail(fmt, ap);
}

void
err(int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	verr(status, fmt, ap);
}

void
vwarnx(const char *fmt, va_list ap)
{
	if (!fuzz_quiet) {
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
}

void
warnx(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vwarnx(fmt, ap);
	va_end(ap);
}

void
vwarn(const char *fmt, va_list ap)
{
	vwarnx(fmt, ap);
}

void
warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vwarnx(fmt, ap);
	va_end(ap);
}

/* A stage's exit() on bad input (the stage's source is included after this file and after
 * every system header it uses, so only its calls are renamed). */
static void __attribute__((noreturn, unused))
fuzz_exit(int status)
{
	(void)status;
	fuzz_jump_back();
}

/* The input as a file descriptor at offset 0, as a stage's stdin would be (a regular file:
 * the stream reader maps it).  -1 on failure. */
static int __attribute__((unused))
fuzz_input_fd(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz-input", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	for (size_t off = 0; off < size;) {
		ssize_t n = write(fd, data + off, size - off);
		if (n <= 0) {
			close(fd);
			return -1;
		}
		off += (size_t)n;
	}
	lseek(fd, 0, SEEK_SET);
	return fd;
}

/* /dev/null for a stage's output, opened once. */
static int __attribute__((unused))
fuzz_null_fd(void)
{
	static int fd = -1;
	if (fd < 0) {
		fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			abort();
		const char *v = getenv("FUZZ_VERBOSE");
		fuzz_quiet = !(v && v[0] == '1');
	}
	return fd;
}

/* A stage that gives up leaves the files it had open to the exit that no longer comes:
 * everything at or above the mark (the first descriptor free at the start) is closed after
 * each input. */
static int fuzz_mark = -1;

static void __attribute__((unused))
fuzz_fd_sweep(void)
{
	if (fuzz_mark < 0) {
		fuzz_mark = dup(0);
		if (fuzz_mark < 0)
			abort();
	}
	for (int fd = fuzz_mark; fd < fuzz_mark + 256; fd++)
		close(fd);
}

/* A private output directory for a stage's files, on tmpfs when there is one (emitters
 * fsync what they write), emptied after each input and removed at exit. */
static char fuzz_dir[64];

static void __attribute__((unused))
fuzz_dir_clean(void)
{
	DIR *d = opendir(fuzz_dir);
	struct dirent *e;
	if (!d)
		return;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
}

static void __attribute__((unused))
fuzz_dir_remove(void)
{
	fuzz_dir_clean();
	rmdir(fuzz_dir);
}

static const char * __attribute__((unused))
fuzz_outdir(void)
{
	if (!fuzz_dir[0]) {
		struct stat st;
		snprintf(fuzz_dir, sizeof(fuzz_dir), "%s/rp-fuzz-XXXXXX",
			 stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) ? "/dev/shm" : "/tmp");
		if (!mkdtemp(fuzz_dir))
			abort();
		atexit(fuzz_dir_remove);
	}
	return fuzz_dir;
}

/* What a stage prints on stdout (commit's "wrote" lines, SVG of folded stacks) goes to
 * /dev/null: libFuzzer reports on stderr. */
static void __attribute__((unused))
fuzz_quiet_stdout(void)
{
	fflush(stdout);
	if (dup2(fuzz_null_fd(), 1) < 0)
		abort();
}

#endif
