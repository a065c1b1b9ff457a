/*
 * serve: answers HTTP for the Firefox Profiler (docs/serve.md).
 *
 *   serve (--profile FILE | --directory DIR) [--listen HOST:PORT] [--symbol-dir DIR]...
 *         [--source-dir DIR]... [--debuginfod URL] [--cors-origin ORIGIN]
 *         [--bearer-token-file FILE | --bearer-token TOKEN]
 *
 * Binds its socket, starts unwind's module opener (opener.h: other ELF files, read-only),
 * then confines itself (lib/confine.h): no capability, and Landlock read access to what
 * it serves only (the profile or directory, the module cache beside
 * it, the symbol and source directories, /usr/lib/debug), write access to nothing but its
 * private debuginfod cache, and a TCP connect only to the --debuginfod port.  Ends on
 * SIGINT or SIGTERM.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "confine.h"
#include "dbgfetch.h"
#include "dbgurl.h"
#include "http.h"
#include "listen.h"
#include "opener.h"
#include "profile.h"
#include "runas.h"
#include "serve.h"
#include "symbolize.h"

#define MAX_SYMBOL_DIRS 64
#define TOKEN_ENV "RUSTPROFILE_BEARER_TOKEN"

static struct serve S;
static struct {
	const char *listen, *debuginfod, *token_file;
	const char *symbol_dirs[MAX_SYMBOL_DIRS];
	size_t nsymbol_dirs;
} opt = { .listen = "127.0.0.1:8080" };
static struct dbgfetch *fetch;

static void
usage(FILE *f, int status)
{
	fputs("usage: serve (--profile FILE | --directory DIR) [--listen HOST:PORT]\n"
	      "             [--symbol-dir DIR]... [--source-dir DIR]... [--debuginfod URL]\n"
	      "             [--cors-origin ORIGIN] [--bearer-token-file FILE | --bearer-token T]\n"
	      "Serves a Firefox profile (GET /profile.json) or a directory of them (the gallery\n"
	      "at GET /), and the symbol API (POST /symbolicate/v5, /source/v1, /asm/v1).\n"
	      "  --listen HOST:PORT      default 127.0.0.1:8080; not loopback: a token is needed\n"
	      "  --bearer-token-file F   the token requests must send (Authorization: Bearer);\n"
	      "                          also " TOKEN_ENV ", or --bearer-token (visible in ps)\n"
	      "  --cors-origin ORIGIN    allow this exact origin (and its OPTIONS preflight)\n"
	      "  --symbol-dir DIR        debug files (repeatable)\n"
	      "  --source-dir DIR        where /source/v1 may read sources (repeatable)\n"
	      "  --debuginfod URL        fetch missing debug files from this server\n"
	      "  --run-as UID:GID        first argument, as root: become that user\n", f);
	exit(status);
}

static void
check_dir(const char *what, const char *dir)
{
	struct stat st;

	if (stat(dir, &st) < 0)
		errx(2, "%s '%s': %s", what, dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		errx(2, "%s '%s': not a directory", what, dir);
}

/* The token's first line, from a file only its owner should read. */
static char *
read_token(const char *path)
{
	char buf[1024];
	FILE *f = fopen(path, "re");

	if (!f)
		errx(2, "--bearer-token-file '%s': %s", path, strerror(errno));
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	buf[strcspn(buf, "\r\n")] = 0;
	return strdup(buf);
}

static void
parse_options(int argc, char **argv)
{
	static const struct option o[] = {
		{ "profile", required_argument, NULL, 'p' },
		{ "directory", required_argument, NULL, 'D' },
		{ "listen", required_argument, NULL, 'l' },
		{ "symbol-dir", required_argument, NULL, 'd' },
		{ "source-dir", required_argument, NULL, 's' },
		{ "debuginfod", required_argument, NULL, 'g' },
		{ "cors-origin", required_argument, NULL, 'c' },
		{ "bearer-token", required_argument, NULL, 't' },
		{ "bearer-token-file", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "h", o, NULL)) != -1) {
		switch (c) {
		case 'p': S.profile = optarg; break;
		case 'D': S.directory = optarg; break;
		case 'l': opt.listen = optarg; break;
		case 'd':
			if (opt.nsymbol_dirs == MAX_SYMBOL_DIRS)
				errx(2, "at most %d --symbol-dir options", MAX_SYMBOL_DIRS);
			check_dir("--symbol-dir", optarg);
			opt.symbol_dirs[opt.nsymbol_dirs++] = optarg;
			break;
		case 's':
			if (S.nsource_dirs == SERVE_MAX_SOURCE_DIRS)
				errx(2, "at most %d --source-dir options", SERVE_MAX_SOURCE_DIRS);
			check_dir("--source-dir", optarg);
			S.source_dirs[S.nsource_dirs++] = optarg;
			break;
		case 'g': opt.debuginfod = optarg; break;
		case 'c': S.cors_origin = optarg; break;
		case 't': S.token = optarg; break;
		case 'T': opt.token_file = optarg; break;
		case 'h': usage(stdout, 0); break;
		default: usage(stderr, 2);
		}
	}
	if (optind != argc)
		errx(2, "unexpected argument '%s'", argv[optind]);
	if (!!S.profile == !!S.directory)
		errx(2, "exactly one of --profile FILE and --directory DIR is required");
	if (S.directory)
		check_dir("--directory", S.directory);
	if (opt.debuginfod && !debuginfod_url_ok(opt.debuginfod))
		errx(2, "--debuginfod '%s': not an http:// or https:// URL", opt.debuginfod);
	if (S.cors_origin && (!S.cors_origin[0] || strpbrk(S.cors_origin, " \t\r\n,*")))
		errx(2, "--cors-origin '%s': one exact origin, like https://profiler.firefox.com",
		     S.cors_origin);
	if (opt.token_file && S.token)
		errx(2, "--bearer-token and --bearer-token-file exclude each other");
	if (opt.token_file)
		S.token = read_token(opt.token_file);
	else if (!S.token && getenv(TOKEN_ENV) && getenv(TOKEN_ENV)[0])
		S.token = strdup(getenv(TOKEN_ENV));
	unsetenv(TOKEN_ENV);
	if (S.token && (strlen(S.token) < 16 || strpbrk(S.token, " \t\r\n")))
		errx(2, "the bearer token must be at least 16 characters, without white space");
}

static void
note(void *ctx, const char *msg)
{
	(void)ctx;
	fprintf(stderr, "serve: %s\n", msg);
}

/* Reads what serves, writes only the debuginfod cache, connects only to debuginfod. */
static void
confine(void)
{
	struct rp_confine_path p[MAX_SYMBOL_DIRS + SERVE_MAX_SOURCE_DIRS + RP_CONFINE_NET_PATHS + 8];
	struct rp_confine_spec spec = { p, 0, 0, NULL, 0 };
	char why[PATH_MAX + 100];

	/* modules at their recorded paths (asm/v1 reads their code), debug links beside them */
	if (opener_start(why, sizeof(why)) < 0)
		errx(1, "%s", why);
	p[spec.npaths++] = (struct rp_confine_path){ S.profile ? S.profile : S.directory,
						     RP_CONFINE_READ };
	if (S.module_cache)
		p[spec.npaths++] = (struct rp_confine_path){ S.module_cache,
							     RP_CONFINE_READ | RP_CONFINE_OPTIONAL };
	for (size_t i = 0; i < opt.nsymbol_dirs; i++)
		p[spec.npaths++] = (struct rp_confine_path){ opt.symbol_dirs[i], RP_CONFINE_READ };
	for (size_t i = 0; i < S.nsource_dirs; i++)
		p[spec.npaths++] = (struct rp_confine_path){ S.source_dirs[i], RP_CONFINE_READ };
	p[spec.npaths++] = (struct rp_confine_path){ "/usr/lib/debug",
						     RP_CONFINE_READ | RP_CONFINE_OPTIONAL };
	if (fetch)
		dbgfetch_confine(fetch, p, &spec);
	if (rp_confine("serve", &spec, why, sizeof(why)) < 0)
		errx(1, "%s", why);
}

/* The module cache beside the profiles: DIR/.modules. */
static char *
module_cache_of(void)
{
	char *copy = strdup(S.profile ? S.profile : S.directory), *dir, *mc = NULL;

	if (!copy)
		errx(1, "out of memory");
	dir = S.profile ? dirname(copy) : copy;
	if (asprintf(&mc, "%s/.modules", dir) < 0)
		errx(1, "out of memory");
	free(copy);
	return mc;
}

static void
load_profile(void)
{
	struct profile p;
	char why[400];

	if (profile_load(S.profile, &p, why, sizeof(why)) < 0)
		errx(1, "--profile '%s': %s", S.profile, why);
	modindex_add_libs(&S.mods, p.doc);
	S.data = p.data;
	S.len = p.len;
	S.jslb = p.jslb;
	p.data = NULL;
	if (p.json == (char *)S.data)
		p.json = NULL;
	profile_free(&p);
}

int
main(int argc, char **argv)
{
	char base[400], why[600];
	int loopback, fd, sig;
	sigset_t set;

	rp_run_as_or_exit(&argc, &argv);
	parse_options(argc, argv);
	if ((fd = listen_on(opt.listen, &loopback, base, sizeof(base), why, sizeof(why))) < 0)
		errx(1, "%s", why);
	if (!loopback && !S.token)
		errx(1, "--listen '%s' is not a loopback address: a bearer token is required "
		     "(--bearer-token-file FILE, " TOKEN_ENV " or --bearer-token)", opt.listen);
	S.base_url = base;
	S.module_cache = module_cache_of();
	S.symbol_dirs = opt.symbol_dirs;
	S.nsymbol_dirs = opt.nsymbol_dirs;
	if (opt.debuginfod && !(fetch = dbgfetch_new(opt.debuginfod, note, NULL, why,
						     sizeof(why))))
		errx(1, "%s", why);
	confine();
	if (S.profile)
		load_profile();
	if (!(S.sym = symbolizer_new(opt.symbol_dirs, opt.nsymbol_dirs, S.module_cache)))
		errx(1, "out of memory");
	symbolizer_set_fetch(S.sym, fetch);
	S.fetch = fetch;
	/* signals wait here: the HTTP thread must not take them */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (http_start(&S, fd) < 0)
		errx(1, "cannot start the HTTP server on '%s'", opt.listen);
	fprintf(stderr, "serve: listening on %s\n", base);
	sigwait(&set, &sig);
	http_stop();
	symbolizer_free(S.sym);
	dbgfetch_free(fetch);
	modindex_free(&S.mods);
	free(S.data);
	free(S.module_cache);
	return 0;
}
