/*
 * check: reports what record's preflight finds about a target (docs/check.md): the
 * executable, architecture, kernel support, root, threads, each mapped module's build id,
 * unwind sections and symbols, and the perf and eBPF load probes; as text, or with --json
 * as the CheckReport (schema version 3).  Exits 1 when the report holds an error, which
 * would stop record too; 2 on a bad option.
 */
#include <err.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dbgurl.h"
#include "parse.h"
#include "report.h"

#define MAX_SYMBOL_DIRS 64

enum { OPT_PID = 256, OPT_DOCKER, OPT_POD, OPT_CONTAINER, OPT_JSON, OPT_SYMBOL_DIR,
       OPT_DEBUGINFOD, OPT_HELP };

static const struct option longopts[] = {
	{ "pid", required_argument, NULL, OPT_PID },
	{ "docker-container", required_argument, NULL, OPT_DOCKER },
	{ "k8s-pod", required_argument, NULL, OPT_POD },
	{ "container", required_argument, NULL, OPT_CONTAINER },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "symbol-dir", required_argument, NULL, OPT_SYMBOL_DIR },
	{ "debuginfod", required_argument, NULL, OPT_DEBUGINFOD },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

static void
usage(FILE *f)
{
	fputs("Usage: check (--pid PID | --docker-container ID_OR_NAME |\n"
	      "              --k8s-pod NAMESPACE/NAME [--container NAME]) [--json]\n"
	      "              [--symbol-dir DIR]... [--debuginfod URL]\n"
	      "Reports what recording the target would find: executable, architecture, kernel\n"
	      "support, root, threads, mapped modules (build id, unwind sections, symbols),\n"
	      "perf access and the eBPF load probes.  Exits 1 when there is an error.\n"
	      "  --pid PID          the process to check\n"
	      "  --docker-container ID_OR_NAME  a Docker container: its init process and cgroup\n"
	      "  --k8s-pod NAMESPACE/NAME       a Pod on this node (from the profiler Pod)\n"
	      "  --container NAME   with --k8s-pod: the application container\n"
	      "  --json             the CheckReport JSON (schema version 3) instead of text\n"
	      "  --symbol-dir DIR   a directory of debug files (repeatable; must exist)\n"
	      "  --debuginfod URL   a debuginfod server (http:// or https://; not fetched)\n", f);
}

int
main(int argc, char **argv)
{
	static struct report r;
	static const char *dirs[MAX_SYMBOL_DIRS];
	int json = 0, opt, selectors = 0;
	char why[200];
	uint64_t v;

	r.selector = "pid";
	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case OPT_PID:
			if (parse_u64(optarg, 1, INT_MAX, &v, why, sizeof(why)) < 0)
				errx(2, "--pid: %s", why);
			r.pid = (pid_t)v;
			selectors++;
			break;
		case OPT_DOCKER:
			r.csel.kind = CTR_DOCKER;
			r.csel.docker = optarg;
			r.selector = "docker-container";
			selectors++;
			break;
		case OPT_POD:
			r.csel.kind = CTR_K8S;
			r.csel.pod = optarg;
			r.selector = "k8s-pod";
			selectors++;
			break;
		case OPT_CONTAINER:
			r.csel.container = optarg;
			break;
		case OPT_JSON:
			json = 1;
			break;
		case OPT_SYMBOL_DIR:
			if (r.nsymbol_dirs == MAX_SYMBOL_DIRS)
				errx(2, "--symbol-dir: at most %d directories", MAX_SYMBOL_DIRS);
			dirs[r.nsymbol_dirs++] = optarg;
			break;
		case OPT_DEBUGINFOD:
			r.debuginfod = optarg;
			break;
		case OPT_HELP:
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc)
		errx(2, "unexpected argument '%s'", argv[optind]);
	if (selectors != 1)
		errx(2, "give exactly one of --pid, --docker-container, --k8s-pod");
	if (r.csel.container && r.csel.kind != CTR_K8S)
		errx(2, "--container is only valid with --k8s-pod");
	r.symbol_dirs = dirs;
	if (r.debuginfod && !debuginfod_url_ok(r.debuginfod))
		report_msg(&r.errors, "--debuginfod %s: not an http:// or https:// URL",
			   r.debuginfod);
	report_container(&r);
	if (r.pid)
		report_target(&r);
	report_modules(&r);
	report_probes(&r);
	int rc = json ? report_print_json(&r) : report_print_text(&r);
	int errors = r.errors.n > 0;
	report_free(&r);
	return rc < 0 || errors ? 1 : 0;
}
