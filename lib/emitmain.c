/* The emitter stage (emitter.h, emitter_main): options, usage, confinement, then the tee. */
#include "emitter.h"

#include <err.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "confine.h"
#include "fsutil.h"
#include "runas.h"
#include "tmpfile.h"

#define MAX_OPTIONS 16          /* an emitter's own, beside --output and --help */

/* One option line: flags, then the help under the column, continued lines aligned. */
static void
option_line(FILE *f, int column, const char *flags, const char *help)
{
	const char *p = help, *nl;

	fprintf(f, "  %-*s", column, flags);
	while ((nl = strchr(p, '\n'))) {
		fprintf(f, "%.*s\n  %*s", (int)(nl - p), p, column, "");
		p = nl + 1;
	}
	fprintf(f, "%s\n", p);
}

static void __attribute__((noreturn))
usage(const struct emitter_ops *ops, FILE *f, int status)
{
	const struct emitter_option *o;

	fprintf(f, "%s\nCopies the rustprofile stream from stdin to stdout and writes, for every "
		"window,\n%s\n", ops->synopsis, ops->writes);
	option_line(f, ops->column, "-o, --output DIR", ops->output_help);
	for (o = ops->options; o && o->name; o++)
		option_line(f, ops->column, o->flags, o->help);
	option_line(f, ops->column, "--run-as UID:GID", "first argument, as root: become that user");
	option_line(f, ops->column, "-h, --help", "show this help");
	exit(status);
}

/* getopt_long's tables for --output, the emitter's options and --help. */
static void
option_tables(const struct emitter_ops *ops, struct option *longs, char *shorts)
{
	const struct emitter_option *o;
	size_t n = 0, k = 0;

	longs[n++] = (struct option){ "output", required_argument, NULL, 'o' };
	shorts[k++] = 'o';
	shorts[k++] = ':';
	for (o = ops->options; o && o->name && n < MAX_OPTIONS + 1; o++) {
		longs[n++] = (struct option){ o->name, o->has_arg, NULL, o->key };
		shorts[k++] = (char)o->key;
		if (o->has_arg == required_argument)
			shorts[k++] = ':';
	}
	longs[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	longs[n] = (struct option){ NULL, 0, NULL, 0 };
	shorts[k++] = 'h';
	shorts[k] = '\0';
}

static void
parse_args(struct emitter *e, int argc, char **argv)
{
	const struct emitter_ops *ops = e->ops;
	struct option longs[MAX_OPTIONS + 3];
	char shorts[2 * MAX_OPTIONS + 5];
	int c;

	option_tables(ops, longs, shorts);
	while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		if (c == 'o')
			e->output = optarg;
		else if (c == 'h')
			usage(ops, stdout, 0);
		else if (c == '?' || c == ':' || !ops->option)
			usage(ops, stderr, 2);
		else
			ops->option(c, optarg);
	}
	if (optind != argc && ops->stray_is_error)
		errx(1, "unexpected argument '%s'", argv[optind]);
	if (optind != argc)
		usage(ops, stderr, 2);
}

/* Writes beneath the output directory only, or in the other mode reads only its file
 * (nothing but stdin for "-"). */
static void
confine(const struct emitter *e, const char *alone)
{
	struct rp_confine_path p[] = { { e->output, RP_CONFINE_READ | RP_CONFINE_WRITE } };
	struct rp_confine_spec spec = { p, 1, 0, NULL, 0 };
	char why[PATH_MAX + 100];

	if (e->ops->confine)
		e->ops->confine(e->output, &spec);
	if (alone)
		p[0] = (struct rp_confine_path){ alone, RP_CONFINE_READ };
	if (alone && !strcmp(alone, "-"))
		spec.npaths = 0;
	if (rp_confine(e->ops->name, &spec, why, sizeof(why)) < 0)
		errx(1, "%s", why);
}

int
emitter_main(const struct emitter_ops *ops, int argc, char **argv)
{
	static struct emitter e;        /* large (buffers, a window end): off the stack */
	char why[PATH_MAX + 64];
	const char *alone;

	e.ops = ops;
	e.output = ".";
	rp_run_as_or_exit(&argc, &argv);
	parse_args(&e, argc, argv);
	alone = ops->alone ? ops->alone() : NULL;
	if (!alone && fs_check_dir(e.output, why, sizeof(why)) < 0)
		errx(1, "%s", why);
	confine(&e, alone);
	/* Ctrl-C stops collect, which ends the stream; this stage finishes at end of input. */
	signal(SIGINT, SIG_IGN);
	tmpfile_remove_on_term();
	if (alone)
		return ops->run_alone();
	emitter_open(&e, 0, 1);
	emitter_loop(&e);
	emitter_release(&e);
	if (close(1) < 0)
		err(1, "stdout");
	return 0;
}
