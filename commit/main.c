/*
 * commit: the last stage, the one place that publishes a window.
 *
 * Reads the framed stream (stdin, or FILE).  Keeps the target frame, warnings, and the
 * FR_FILE frames that emitters wrote for each window (temp files already in the output
 * directory).  On each FR_WINDOW_END it writes the window's diagnostics JSON, renames all
 * of the window's files into place at once, applies --keep-windows, and only then prints
 * one "wrote PATH" line per file on stdout, nothing else.  Each window's FR_MODULES become
 * its refs file in the module cache, which is pruned with retention (modrefs.h).  On a
 * truncated or corrupt stream it removes the temps of unpublished windows and exits 1 (4
 * when the stream ended early); published windows stay.  At the end of a run, and at
 * SIGTERM, SIGHUP or SIGPIPE, it removes every temporary file of this session still in DIR
 * (sweep.c); file frames are checked before they are acted on (accept.c).
 * Writes no stream: it is the end of the pipeline.  SIGINT is ignored: collect handles it
 * and the stream ends with an END frame.
 * Confined (lib/confine.h) to the output directory and FILE.  --check applies the same
 * confinement and then asks the kernel whether DIR may be written (faccessat, so the
 * directory is left as it was), so a driver's check sees what the run will; --landlock-abi
 * tells a driver whether Landlock is there.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commit.h"
#include "confine.h"
#include "defaults.h"
#include "fsutil.h"
#include "modrefs.h"
#include "runas.h"
#include "stream.h"

static struct env {
	const char *output;
	uint32_t keep_windows;
	const char *input;
	int check;
	int session_fd;         /* where the stream's session id is told (-1: nowhere) */
	const char *sweep;      /* --sweep SESSION: remove that session's temporaries */
} env = {
	.keep_windows = RP_DEFAULT_KEEP_WINDOWS,
	.session_fd = -1,
};

static const char usage_text[] =
	"usage: commit --output DIR [--keep-windows N] [--check] [FILE]\n"
	"\n"
	"Publishes each window of the stream (stdin, or FILE) in DIR: writes the window's\n"
	"diagnostics JSON, renames the window's files into place together, and prints\n"
	"'wrote PATH' for each file once the window is complete.\n"
	"\n"
	"  -o, --output DIR        output directory; the emitters' temp files are in it\n"
	"  -k, --keep-windows N    keep only the newest N windows written by this run\n"
	"                          (default " RP_DEFAULT_TEXT(RP_DEFAULT_KEEP_WINDOWS) "); older runs' "
	"files are never removed\n"
	"      --check             validate the options and exit; when DIR exists, also\n"
	"                          confine as a run would and check that DIR may be\n"
	"                          written (DIR need not exist yet, nor --output be given)\n"
	"      --landlock-abi      print the kernel's Landlock ABI version (0: none), exit\n"
	"      --session-fd N      write the stream's session id (16 hex digits and a\n"
	"                          newline) to the open descriptor N once it is read\n"
	"      --sweep SESSION     remove the temporary files of session SESSION left in DIR\n"
	"                          (by a commit that was killed) and exit\n"
	"      --run-as UID:GID    first argument, as root: become that user\n"
	"  -h, --help              show this help\n"
	"\n"
	"example: ... | emit-pprof --output out | commit --output out\n";

static void
parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "keep-windows", required_argument, NULL, 'k' },
		{ "check", no_argument, NULL, 'c' },
		{ "landlock-abi", no_argument, NULL, 'L' },
		{ "session-fd", required_argument, NULL, 'S' },
		{ "sweep", required_argument, NULL, 'W' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	char *end;
	unsigned long n;
	int c;

	while ((c = getopt_long(argc, argv, "o:k:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			env.output = optarg;
			break;
		case 'k':
			errno = 0;
			n = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || optarg[0] == '-' || n == 0 ||
			    n > 1000000)
				errx(1, "--keep-windows must be a positive integer up to 1000000, "
					"not '%s'", optarg);
			env.keep_windows = (uint32_t)n;
			break;
		case 'c':
			env.check = 1;
			break;
		case 'S':
			errno = 0;
			n = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || optarg[0] == '-' || n > 1048576)
				errx(1, "--session-fd must be a descriptor number, not '%s'", optarg);
			env.session_fd = (int)n;
			break;
		case 'W':
			if (strlen(optarg) != 16 || strspn(optarg, "0123456789abcdef") != 16)
				errx(1, "--sweep wants a session id of 16 hex digits, not '%s'",
				     optarg);
			env.sweep = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			exit(0);
		case 'L':
			/* For a driver deciding whether a stage as uid 0 can be confined. */
			printf("%d\n", rp_landlock_abi());
			exit(fclose(stdout) != 0);
		default:
			errx(1, "usage: commit --output DIR [--keep-windows N] [--check] [FILE]");
		}
	}
	/* --check without --output: the options are all there is to check. */
	if (!env.output && !env.check)
		errx(1, "usage: commit --output DIR [--keep-windows N] [--check] [FILE]");
	if (optind < argc)
		env.input = argv[optind++];
	if (optind < argc)
		errx(1, "usage: commit --output DIR [--keep-windows N] [--check] [FILE]");
}

/* Writes beneath the output directory, reads FILE; nothing else. */
static void
confine(void)
{
	const struct rp_confine_path p[] = {
		{ env.output, RP_CONFINE_READ | RP_CONFINE_WRITE },
		{ env.input, RP_CONFINE_READ },
	};
	const struct rp_confine_spec spec = { p, env.input ? 2 : 1, 0, NULL, 0 };
	char why[PATH_MAX + 100];

	if (rp_confine("commit", &spec, why, sizeof(why)) < 0)
		errx(1, "%s", why);
}

/* --check: DIR, when it exists, must be writable by the confined stage. */
static int
check_output(void)
{
	struct stat st;

	if (!env.output || (stat(env.output, &st) < 0 && errno == ENOENT))
		return 0; /* made by the driver later: the options are all there is to check */
	confine();
	int dirfd = open(env.output, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		err(1, "cannot open output directory '%s'", env.output);
	/* Asked of the kernel, not tried: a file made and removed would change the
	 * directory's times, and a check leaves the directory as it was.  Landlock allows the
	 * directory by construction; the file modes are what can refuse. */
	if (faccessat(dirfd, ".", W_OK | X_OK, AT_EACCESS) < 0)
		err(1, "cannot write to output directory '%s'", env.output);
	close(dirfd);
	return 0;
}

/* Exit status of die(): 1, or STREAM_EXIT_INPUT_ENDED when the stage before stopped. */
static int die_status = 1;

/* Stops on a stream or output error: no temp file of an unpublished window survives, nor
 * one of this session that no stage handed over. */
static void __attribute__((noreturn, format(printf, 2, 3)))
die(struct commit *c, const char *fmt, ...)
{
	va_list ap;

	commit_sweep_block(1);
	commit_remove_pending(c);
	commit_sweep();
	va_start(ap, fmt);
	verrx(die_status, fmt, ap);
}

static void
end_window(struct commit *c, const char *name, const struct frame *f)
{
	static struct fr_window_end we; /* large; one at a time */
	struct commit_batch b;
	char err[512];

	if (stream_get_window_end(f, &we, err, sizeof(err)) < 0 ||
	    commit_take_window(c, &we, &b, err, sizeof(err)) < 0)
		die(c, "%s: %s", name, err);
	/* A signal waits until the window is out whole, or undone. */
	commit_sweep_block(1);
	if (commit_publish(c, &b, err, sizeof(err)) < 0) {
		commit_batch_release(&b);
		die(c, "%s", err);
	}
	commit_batch_release(&b);
	commit_sweep_block(0);
}

/* One frame; returns 1 at the END frame. */
static int
handle(struct commit *c, const char *name, const struct frame *f)
{
	union {
		struct fr_target target;
		struct fr_warning warning;
		struct fr_window_start start;
		struct fr_file file;
		struct fr_modules modules;
		struct fr_export export_;
	} v;
	char err[512];
	int rc = 0;

	switch (f->type) {
	case FR_TARGET:
		if ((rc = stream_get_target(f, &v.target, err, sizeof(err))) == 0)
			commit_set_target(c, &v.target);
		break;
	case FR_WARNING:
		if ((rc = stream_get_warning(f, &v.warning, err, sizeof(err))) == 0)
			commit_add_warning(c, &v.warning);
		break;
	case FR_WINDOW_START:
		if ((rc = stream_get_window_start(f, &v.start, err, sizeof(err))) == 0)
			rc = commit_window_start(c, &v.start, err, sizeof(err));
		break;
	case FR_FILE:
		if ((rc = stream_get_file(f, &v.file, err, sizeof(err))) == 0)
			rc = v.file.flags & FILE_DISCARD ?
				     commit_discard_file(c, &v.file, err, sizeof(err)) :
				     commit_add_file(c, &v.file, err, sizeof(err));
		break;
	case FR_WINDOW_END:
		end_window(c, name, f);
		break;
	case FR_MODULES:
		if ((rc = stream_get_modules(f, &v.modules, err, sizeof(err))) == 0)
			modrefs_add(c, &v.modules);
		break;
	case FR_EXPORT:
		if ((rc = stream_get_export(f, &v.export_, err, sizeof(err))) == 0) {
			commit_sweep_block(1);
			rc = commit_otlp_result(c, &v.export_, err, sizeof(err));
			commit_sweep_block(0);
		}
		break;
	case FR_END:
		modrefs_prune(c, 1);
		return 1;
	default:
		break; /* not ours: samples, stacks, and types newer than this stage */
	}
	if (rc < 0)
		die(c, "%s: %s", name, err);
	return 0;
}

static void
run(struct commit *c, int fd, const char *name)
{
	struct stream_reader r;
	struct frame f;
	int rc;

	if (stream_reader_open(&r, fd, name, &c->header) < 0)
		errx(stream_reader_status(&r), "%s: %s", name, r.err);
	if (env.session_fd >= 0) {
		/* So a driver can sweep this session's temporaries should commit be killed. */
		dprintf(env.session_fd, "%016llx\n", (unsigned long long)c->header.session_id);
		close(env.session_fd);
	}
	commit_sweep_init(c->dirfd, c->header.session_id);
	commit_sweep_on_signals();
	while ((rc = stream_read(&r, &f)) > 0)
		if (handle(c, name, &f))
			break;
	/* Nothing may follow the end frame: the reader says so if something does. */
	if (rc > 0)
		rc = stream_read(&r, &f) < 0 ? -1 : 1;
	if (rc < 0) {
		die_status = stream_reader_status(&r);
		die(c, "%s: %s", name, r.err);
	}
	if (rc == 0) {
		die_status = STREAM_EXIT_INPUT_ENDED;
		die(c, "%s: truncated stream: it ended without an end frame", name);
	}
	if (c->nopen)
		die(c, "%s: window %u has no end frame", name, c->open[0].index);
	if (c->nfiles)
		die(c, "%s: file '%s' of window %u was never published", name, c->files[0].name,
		    c->files[0].index);
	/* What a killed emitter left, or an emitter no stage heard of any more. */
	commit_sweep_block(1);
	commit_sweep();
	commit_sweep_block(0);
	stream_reader_release(&r);
}

int
main(int argc, char **argv)
{
	struct commit c = { 0 };
	size_t len;
	int fd = 0;

	rp_run_as_or_exit(&argc, &argv);
	parse_args(argc, argv);
	if (env.check)
		return check_output();
	confine();
	if (env.sweep) {
		int dirfd = open(env.output, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dirfd < 0)
			err(1, "cannot open output directory '%s'", env.output);
		commit_sweep_init(dirfd, strtoull(env.sweep, NULL, 16));
		commit_sweep();
		return 0;
	}
	signal(SIGINT, SIG_IGN);
	if (env.input && (fd = open(env.input, O_RDONLY | O_CLOEXEC)) < 0)
		err(1, "cannot open '%s'", env.input);
	c.dirfd = open(env.output, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (c.dirfd < 0)
		err(1, "cannot open output directory '%s'", env.output);
	/* Paths print as dir + "/" + name: "out/" gives "out/name" and "/" gives "/name". */
	len = strlen(env.output);
	while (len > 0 && env.output[len - 1] == '/')
		len--;
	c.dir = strndup(env.output, len);
	if (!c.dir)
		errx(1, "out of memory");
	c.keep_windows = env.keep_windows;
	run(&c, fd, env.input ? env.input : "stdin");
	modrefs_release(&c);
	commit_release(&c);
	free((char *)c.dir);
	close(c.dirfd);
	if (fclose(stdout) != 0)
		err(1, "stdout");
	return 0;
}
