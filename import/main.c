/*
 * import: reads a perf.data (file or pipe mode, zstd-compressed or not, either byte order)
 * or simpleperf capture and writes on stdout the framed stream collect would have written,
 * so that unwind, aggregate, the emitters and commit turn it into windows unchanged.
 *
 * Reads: the capture (--input; "-" is stdin).  A regular file is mapped, a pipe is read
 * forward; either way memory does not grow with the capture.
 * Writes: header, FR_MMAP/FR_COMM/FR_FORK/FR_EXIT, FR_TARGET before the first sample,
 * FR_SAMPLE for the chosen event, FR_LOST, FR_ROUND at perf's FINISHED_ROUND, FR_WARNING
 * lines for the diagnostics, FR_END.  A truncated or corrupt capture stops with one line
 * naming the byte offset and status 1; the frames already written stay written.
 * Confined (lib/confine.h, docs/privileges.md) to reading the capture.
 */
#include <err.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "confine.h"
#include "defaults.h"
#include "import.h"
#include "runas.h"

static struct {
	const char *input;
	const char *name;       /* the input in messages */
	const char *event;
	const char *kallsyms;
	int proc_kallsyms_fd;   /* -1: open /proc/kallsyms here */
	enum imp_format format;
} env;

static void
usage(FILE *f, int status)
{
	fprintf(f,
		"usage: import --input PATH [--format auto|perf-data|simpleperf] [--event NAME]\n"
		"              [--kallsyms FILE] [--input-name NAME] > stream\n"
		"\n"
		"Turns a perf.data or simpleperf capture into the framed event stream.\n"
		"  --input PATH       the capture; - reads it on stdin\n"
		"  --format FORMAT    auto, perf-data or simpleperf (default " RP_DEFAULT_FORMAT ")\n"
		"  --event NAME       the sampling event to import (default: of the events with\n"
		"                     samples, cpu-clock or task-clock, else cycles, else the\n"
		"                     first); NAME also matches NAME:modifiers (cycles for\n"
		"                     cycles:u) and the event on every PMU of a hybrid CPU\n"
		"                     (cycles for cpu_core/cycles/ and cpu_atom/cycles/)\n"
		"  --kallsyms FILE    the recording kernel's /proc/kallsyms, for kernel names when\n"
		"                     the capture's kernel is not the running one\n"
		"  --input-name NAME  how messages name the input (default: PATH)\n"
		"  --proc-kallsyms-fd N  the running kernel's /proc/kallsyms, opened on fd N by a\n"
		"                     privileged caller (the kernel shows addresses to its opener)\n"
		"  --run-as UID:GID   first argument, as root: become that user\n");
	exit(status);
}

static enum imp_format
format_of(const char *name)
{
	if (!strcmp(name, "auto"))
		return FMT_AUTO;
	if (!strcmp(name, "perf-data"))
		return FMT_PERF;
	if (!strcmp(name, "simpleperf"))
		return FMT_SIMPLEPERF;
	errx(1, "--format: unknown format '%s' (auto, perf-data, simpleperf)", name);
}

static void
parse_options(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "input", required_argument, NULL, 'i' },
		{ "format", required_argument, NULL, 'f' },
		{ "event", required_argument, NULL, 'e' },
		{ "kallsyms", required_argument, NULL, 'k' },
		{ "input-name", required_argument, NULL, 'n' },
		{ "proc-kallsyms-fd", required_argument, NULL, 'K' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	env.proc_kallsyms_fd = -1;
	env.format = format_of(RP_DEFAULT_FORMAT);
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			env.input = optarg;
			break;
		case 'f':
			env.format = format_of(optarg);
			break;
		case 'e':
			env.event = optarg;
			break;
		case 'k':
			env.kallsyms = optarg;
			break;
		case 'n':
			env.name = optarg;
			break;
		case 'K': {
			char *end;
			long fd = strtol(optarg, &end, 10);
			if (end == optarg || *end || fd < 0 || fd > INT_MAX ||
			    fcntl((int)fd, F_GETFD) < 0)
				errx(1, "--proc-kallsyms-fd: '%s' is not an open file descriptor", optarg);
			env.proc_kallsyms_fd = (int)fd;
			break;
		}
		case 'h':
			usage(stdout, 0);
			break;
		default:
			usage(stderr, 2);
		}
	}
	if (optind != argc)
		errx(1, "unexpected argument '%s'", argv[optind]);
	if (!env.input)
		errx(1, "--input is required");
	if (!env.name)
		env.name = env.input;
}

/* Kernel names (kallsyms.c) come from files opened now: the confined stage reads only the
 * capture.  The running kernel's are optional; --kallsyms FILE must open. */
static void
open_kallsyms(struct kallsyms *k)
{
	k->proc_fd = env.proc_kallsyms_fd >= 0 ? env.proc_kallsyms_fd
					       : open("/proc/kallsyms", O_RDONLY | O_CLOEXEC);
	k->notes_fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);
	if (env.kallsyms && (k->fd = open(env.kallsyms, O_RDONLY | O_CLOEXEC)) < 0)
		err(1, "--kallsyms: cannot open '%s'", env.kallsyms);
	k->file = env.kallsyms;
}

int
main(int argc, char **argv)
{
	static struct imp m;
	char e[200];

	rp_run_as_or_exit(&argc, &argv);
	parse_options(argc, argv);
	imp_init(&m, STDOUT_FILENO);
	open_kallsyms(&m.ks);
	/* It reads the capture (or stdin) and writes stdout: no other file. */
	const struct rp_confine_path in[] = { { env.input, RP_CONFINE_READ } };
	const struct rp_confine_spec spec = { in, strcmp(env.input, "-") != 0, 0, NULL, 0 };
	char why[PATH_MAX + 100];
	if (rp_confine("import", &spec, why, sizeof(why)) < 0)
		errx(1, "%s", why);
	signal(SIGINT, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	int fd = strcmp(env.input, "-") ? open(env.input, O_RDONLY | O_CLOEXEC) : 0;
	if (fd < 0)
		err(1, "cannot open '%s'", env.name);
	m.format = env.format;
	m.want_event = env.event;
	if (getrandom(&m.session_id, sizeof(m.session_id), 0) != sizeof(m.session_id))
		err(1, "getrandom");
	if (src_open_fd(&m.src, fd, e, sizeof(e)) < 0)
		errx(1, "cannot read '%s': %s", env.name, e);
	if (perfdata_run(&m) < 0) {
		/* Keep what is out, held output included: downstream publishes the windows
		 * already complete. */
		char why[sizeof(m.err)];
		memcpy(why, m.err, sizeof(why));
		(void)kallsyms_finish(&m);
		if (m.opened)
			(void)stream_flush(&m.out);
		errx(m.opened ? stream_writer_status(&m.out) : 1, "'%s': %s", env.name, why);
	}
	imp_release(&m);
	if (fd > 0)
		close(fd);
	return 0;
}
