/*
 * unwind: validates and symbolizes the stacks of raw samples.
 *
 * Reads the framed stream on stdin and writes it on stdout.  Each FR_SAMPLE (frame-pointer
 * chain) and FR_SAMPLE_REGS (registers and stack copy, see dwarfstack.h) is replaced by
 * an FR_STACK of location ids (leaf first), each FR_OFFCPU by an FR_OFFCPU_STACK
 * (offcpu.h), each FR_ALLOC by an FR_HEAP_STACK (heapstack.h) and each FR_PAGE_ALLOC by an
 * FR_PAGE_STACK (pagestack.h); the FR_MAPPING, FR_FUNCTION and FR_LOCATION frames defining
 * those ids are written before their first use.  Every other frame is forwarded untouched; before a
 * round come FR_FORGET frames listing the mappings no process maps any more (a process
 * that ended is forgotten at the first round after its exit, docs/churn.md).  Runs without
 * privileges: ELF and debug files come from the module cache collect filled, the original
 * paths, /usr/lib/debug and --symbol-dir.
 * Confined (lib/confine.h) to reading the module cache, the --symbol-dir directories and
 * /usr/lib/debug; the ELF files elsewhere (recorded paths, debug links beside them) come
 * through the module opener (opener.h), which hands out regular ELF files only.  With
 * --debuginfod URL, debug files no local search finds are fetched from that server
 * (dbgfetch.h; the only network use of a stage, and only with the flag), each failure a
 * warning frame that the window's diagnostics list, and the client's counts a debuginfod
 * frame (those of an earlier run in the input are dropped).
 */
#include <err.h>
#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "confine.h"
#include "defaults.h"
#include "dbgcache.h"
#include "dbgfetch.h"
#include "dbgurl.h"
#include "dwarfstack.h"
#include "fpstack.h"
#include "heapstack.h"
#include "pagestack.h"
#include "jitsyms.h"
#include "offcpu.h"
#include "opener.h"
#include "parse.h"
#include "resolve.h"
#include "runas.h"
#include "sanitizer.h"
#include "stream.h"
#include "symbolize.h"

#define MAX_SYMBOL_DIRS 64

static struct {
	const char *symbol_dirs[MAX_SYMBOL_DIRS + 1];	/* + the module cache */
	size_t nsymbol_dirs;
	const char *module_cache;
	const char *debuginfod;
	const char *debug_cache;
	uint64_t max_debug_cache;
	int allow_partial;
} env = { .max_debug_cache = RP_DEFAULT_MAX_DEBUG_CACHE };

static struct dbgfetch *fetch;		/* --debuginfod */
static struct dbgcache *dbgcache;	/* --debug-cache */
static struct stream_writer out;

static struct dwarfstack dw;	/* FR_SAMPLE_REGS: CFI tables by module */
static struct jitsyms jit;	/* JIT names from the module cache's perf maps and jitdumps */

static void
usage(FILE *f, int status)
{
	fprintf(f,
		"usage: unwind [--symbol-dir DIR]... [--module-cache DIR] [--debuginfod URL]\n"
		"              [--debug-cache DIR [--max-debug-cache BYTES]] [--allow-partial]\n"
		"              [--check] < stream > stream\n"
		"\n"
		"Validates frame-pointer stacks against executable mappings, unwinds DWARF samples\n"
		"(registers and stack copies) with the modules' CFI, and symbolizes them.\n"
		"  --allow-partial     a failed DWARF unwind keeps its leaf address (not usable)\n"
		"  --symbol-dir DIR    extra debug-file directory (repeatable): DIR/<name>,\n"
		"                      DIR/<name>.debug and DIR/.build-id/xx/rest.debug\n"
		"  --module-cache DIR  build-id keyed copies of the target's ELF files\n"
		"  --debuginfod URL    fetch debug files missing locally from this server\n"
		"  --debug-cache DIR   keep debug files there with their DWARF inflated, by build\n"
		"                      id, for later runs (created when missing; docs/debug-cache.md)\n"
		"  --max-debug-cache BYTES  what the debug cache may hold, least recently used\n"
		"                      files removed first [" RP_DEFAULT_TEXT(RP_DEFAULT_MAX_DEBUG_CACHE) "]\n"
		"  --check             validate the options (each --symbol-dir must exist) and exit\n"
		"  --run-as UID:GID    first argument, as root: become that user (docs/privileges.md)\n");
	exit(status);
}

/* A --symbol-dir that does not exist is a mistake in the command line, not a directory
 * that happens to hold no debug file: refused at once, as the manual's check does. */
static void
check_symbol_dir(const char *dir)
{
	struct stat st;

	if (stat(dir, &st) < 0)
		errx(1, "--symbol-dir '%s': %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		errx(1, "--symbol-dir '%s': not a directory", dir);
}

static void
parse_options(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "symbol-dir", required_argument, NULL, 'd' },
		{ "module-cache", required_argument, NULL, 'c' },
		{ "debuginfod", required_argument, NULL, 'g' },
		{ "debug-cache", required_argument, NULL, 'D' },
		{ "max-debug-cache", required_argument, NULL, 'M' },
		{ "allow-partial", no_argument, NULL, 'p' },
		{ "check", no_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, check = 0;
	char why[200];

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (env.nsymbol_dirs == MAX_SYMBOL_DIRS)
				errx(1, "at most %d --symbol-dir options", MAX_SYMBOL_DIRS);
			check_symbol_dir(optarg);
			env.symbol_dirs[env.nsymbol_dirs++] = optarg;
			break;
		case 'k':
			check = 1;
			break;
		case 'c':
			env.module_cache = optarg;
			break;
		case 'p':
			env.allow_partial = 1;
			break;
		case 'g':
			if (!debuginfod_url_ok(optarg))
				errx(1, "--debuginfod '%s': not an http:// or https:// URL", optarg);
			env.debuginfod = optarg;
			break;
		case 'D':
			if (!optarg[0])
				errx(1, "--debug-cache: empty directory name");
			env.debug_cache = optarg;
			break;
		case 'M':
			if (parse_bytes(optarg, 1, UINT64_MAX, &env.max_debug_cache, why,
					sizeof(why)) < 0)
				errx(1, "--max-debug-cache: %s", why);
			break;
		case 'h':
			usage(stdout, 0);
			break;
		default:
			usage(stderr, 2);
		}
	}
	if (optind != argc)
		errx(1, "unexpected argument '%s'", argv[optind]);
	if (check)
		exit(0);
}

/* A failed fetch is told in the windows' diagnostics: a warning frame, taken by the next
 * window that ends (commit gives a window every warning older than its end). */
static void
fetch_note(void *ctx, const char *msg)
{
	struct fr_warning w = { 0, { msg, (uint16_t)strlen(msg) } };

	(void)ctx;
	if (stream_put_warning(&out, &w) < 0)
		errx(stream_writer_status(&out), "%s", out.err[0] ? out.err : "out of memory");
}

/* With --debuginfod, what the client came to, as a debuginfod frame whenever a module was
 * queried since the last one (and a first one, all zero): written before the next frame is
 * handled, so the last one comes before the end frame. */
static void
put_fetch_counts(void)
{
	static uint64_t written = UINT64_MAX;
	const struct dbgfetch_stats *s = fetch ? dbgfetch_stats(fetch) : NULL;

	if (!s || s->queried == written)
		return;
	struct fr_debuginfod d = { s->queried, s->requests, s->fetched, s->not_found, s->failed,
				   s->out_of_time, s->oversized, s->bytes_fetched };
	written = s->queried;
	if (stream_put_debuginfod(&out, &d) < 0)
		errx(stream_writer_status(&out), "%s", out.err[0] ? out.err : "out of memory");
}

/* Reads beneath each --symbol-dir, the module cache and /usr/lib/debug, and writes only in
 * the --debug-cache directory.  A missing module cache is no error: an import has none, and collect may create it only after
 * this stage started; its files then come through the module opener like any ELF file.
 * With --debuginfod it also writes its private debuginfod cache, reads what name
 * resolution and TLS need, and connects to the server's port, and nowhere else. */
static void
confine(void)
{
	struct rp_confine_path p[MAX_SYMBOL_DIRS + 4 + RP_CONFINE_NET_PATHS];
	struct rp_confine_spec spec = { p, 0, 0, NULL, 0 };
	char why[PATH_MAX + 100];

	if (opener_start(why, sizeof(why)) < 0)
		errx(1, "%s", why);
	for (size_t i = 0; i < env.nsymbol_dirs; i++)
		p[spec.npaths++] = (struct rp_confine_path){ env.symbol_dirs[i], RP_CONFINE_READ };
	if (env.module_cache)
		p[spec.npaths++] = (struct rp_confine_path){ env.module_cache,
							     RP_CONFINE_READ | RP_CONFINE_OPTIONAL };
	p[spec.npaths++] = (struct rp_confine_path){ "/usr/lib/debug",
						     RP_CONFINE_READ | RP_CONFINE_OPTIONAL };
	/* The cache is only a faster way to what the debug files give: one that cannot be
	 * made is said once, and the run goes on without it. */
	if (env.debug_cache && !(dbgcache = dbgcache_open(env.debug_cache, env.max_debug_cache,
							   why, sizeof(why))))
		warnx("%s: going on without it", why);
	if (dbgcache)
		p[spec.npaths++] = (struct rp_confine_path){ env.debug_cache,
							     RP_CONFINE_READ | RP_CONFINE_WRITE };
	if (env.debuginfod) {
		if (!(fetch = dbgfetch_new(env.debuginfod, fetch_note, NULL, why, sizeof(why))))
			errx(1, "%s", why);
		dbgfetch_confine(fetch, p, &spec);
	}
	if (rp_confine("unwind", &spec, why, sizeof(why)) < 0)
		errx(1, "%s", why);
}

static void
check_target(const struct frame *f)
{
	struct fr_target t;
	char e[200];

	if (stream_get_target(f, &t, e, sizeof(e)) < 0)
		errx(1, "stdin: %s", e);
	if (t.unwind_mode.len && !str_eq(t.unwind_mode, "fp") &&
	    !str_eq(t.unwind_mode, "dwarf"))
		errx(1, "unwind mode '%.*s' is not available in this build", t.unwind_mode.len,
		     t.unwind_mode.p);
}

/* The JIT statistics, before a round or the end when they changed (docs/jit.md). */
static void
put_jit(struct stream_writer *out, const struct frame *f)
{
	struct fr_round rd;
	struct fr_end end;
	char e[200];

	if (!jitsyms_take_changed(&jit))
		return;
	const struct jitstats *s = &jit.st;
	if (f->type == FR_END ? stream_get_end(f, &end, e, sizeof(e)) < 0 :
				stream_get_round(f, &rd, e, sizeof(e)) < 0)
		errx(1, "stdin: %s", e);
	struct fr_jit j = { f->type == FR_END ? end.time : rd.time, (uint32_t)s->files, s->symbols, s->dropped, s->truncated,
			    s->malformed, s->rereads, s->named, s->unnamed };
	if (stream_put_jit(out, &j) < 0)
		errx(stream_writer_status(out), "%s", out->err);
}

/* Handles one frame; returns 1 after FR_END. */
static int
on_frame(struct resolver *r, struct stream_writer *out, const struct frame *f)
{
	static struct fr_sample s;
	static struct fr_sample_regs sr;
	static struct fr_stack st;
	union {
		struct fr_ksym k;
	} u;
	char e[200];

	put_fetch_counts();
	/* Samples are decoded (and so checked) once, by their own decoder. */
	if (f->type != FR_SAMPLE && f->type != FR_SAMPLE_REGS &&
	    stream_check_frame(f, e, sizeof(e)) < 0)
		errx(1, "stdin: %s", e);
	switch (f->type) {
	case FR_DEBUGINFOD:
		return 0; /* this stage's own client counts: an earlier run's are not passed on */
	case FR_SAMPLE:
		if (stream_get_sample(f, &s, e, sizeof(e)) < 0)
			errx(1, "stdin: %s", e);
		if (fpstack_resolve(r, &s, &st) < 0 || stream_put_stack(out, &st) < 0)
			errx(stream_writer_status(out), "%s", out->err[0] ? out->err : "out of memory");
		return 0;
	case FR_SAMPLE_REGS:
		if (stream_get_sample_regs(f, &sr, e, sizeof(e)) < 0)
			errx(1, "stdin: %s", e);
		if (dwarfstack_resolve(&dw, r, &sr, &st) < 0 || stream_put_stack(out, &st) < 0)
			errx(stream_writer_status(out), "%s", out->err[0] ? out->err : "out of memory");
		return 0;
	case FR_OFFCPU: {
		static struct fr_offcpu oc;
		stream_get_offcpu(f, &oc, e, sizeof(e));
		if (offcpu_resolve(r, &dw, &oc, out) < 0)
			errx(stream_writer_status(out), "%s", out->err[0] ? out->err : "out of memory");
		return 0;
	}
	case FR_ALLOC: {
		static struct fr_alloc a;
		stream_get_alloc(f, &a, e, sizeof(e));
		if (heapstack_resolve(r, &dw, &a, out) < 0)
			errx(stream_writer_status(out), "%s", out->err[0] ? out->err : "out of memory");
		return 0;
	}
	case FR_PAGE_ALLOC: {
		static struct fr_page_alloc pa;
		stream_get_page_alloc(f, &pa, e, sizeof(e));
		if (pagestack_resolve(r, &pa, out) < 0)
			errx(stream_writer_status(out), "%s", out->err[0] ? out->err : "out of memory");
		return 0;
	}
	case FR_TARGET:
		check_target(f);
		break;
	case FR_KSYM:
		stream_get_ksym(f, &u.k, e, sizeof(e));
		if (resolver_add_ksym(r, &u.k) < 0)
			errx(1, "out of memory");
		break;
	case FR_MMAP:
	case FR_COMM:
	case FR_USYM:
	case FR_FORK:
	case FR_EXIT:
	case FR_ROUND:
		if (resolver_frame(r, f, e, sizeof(e)) < 0)
			errx(1, "stdin: %s", e);
		if (f->type == FR_ROUND)
			put_jit(out, f);
		break;
	case FR_END:
		put_jit(out, f);
		break;
	}
	if (stream_forward(out, f) < 0)
		errx(stream_writer_status(out), "%s", out->err);
	return f->type == FR_END;
}

int
main(int argc, char **argv)
{
	static struct stream_reader in;
	static struct resolver r;
	struct stream_header h;
	struct frame f;
	int rc, ended = 0;

	rp_run_as_or_exit(&argc, &argv);
	parse_options(argc, argv);
	confine();
	signal(SIGINT, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	struct symbolizer *sym = symbolizer_new(env.symbol_dirs, env.nsymbol_dirs,
						env.module_cache);
	if (!sym)
		errx(1, "out of memory");
	symbolizer_set_fetch(sym, fetch);
	symbolizer_set_dbgcache(sym, dbgcache);
	if (stream_reader_open(&in, 0, "stdin", &h) < 0)
		errx(stream_reader_status(&in), "stdin: %s", in.err);
	in.order.rules = ORDER_BEFORE_WINDOWS; /* a collect stream: no windows, no files */
	if (stream_writer_open(&out, 1, "stdout", &h) < 0 || resolver_init(&r, &out, sym) < 0 ||
	    jitsyms_init(&jit, env.module_cache, h.session_id) < 0)
		errx(1, "out of memory");
	r.jit = &jit;
	in.flush_on_wait = &out; /* output never waits for input */
	/* debug files for .debug_frame: the symbolizer's places, the module cache last */
	env.symbol_dirs[env.nsymbol_dirs] = env.module_cache;
	if (dwarfstack_init(&dw, (uint16_t)h.e_machine, env.symbol_dirs,
			    env.nsymbol_dirs + !!env.module_cache, env.allow_partial) < 0)
		errx(1, "out of memory");
	while ((rc = stream_read(&in, &f)) > 0)
		ended |= on_frame(&r, &out, &f);
	if (rc < 0)
		errx(stream_reader_status(&in), "stdin: %s", in.err);
	if (!ended)
		errx(STREAM_EXIT_INPUT_ENDED, "stdin: truncated stream: it ended without an end frame");
	if (stream_flush(&out) < 0)
		errx(stream_writer_status(&out), "%s", out.err);
	dbgfetch_free(fetch);	/* removes this run's private debuginfod cache */
	if (!RP_FREE_AT_EXIT)
		return 0;	/* lib/sanitizer.h */
	resolver_release(&r);
	jitsyms_release(&jit);
	dwarfstack_release(&dw);
	symbolizer_free(sym);
	dbgcache_free(dbgcache);
	stream_reader_release(&in);
	stream_writer_release(&out);
	return 0;
}
