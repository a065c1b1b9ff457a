/* dbgfetch: the debuginfod client (see dbgfetch.h). */
#include "dbgfetch.h"

#include <dirent.h>
#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "confine.h"
#include "dbgurl.h"
#include "debugfile.h"
#include "errbuf.h"

struct dbgfetch {
	debuginfod_client *c;
	char cache[4096];
	double deadline;		/* CLOCK_MONOTONIC seconds */
	uint64_t max_bytes;
	int over, late;			/* why the progress callback stopped a transfer */
	struct dbgfetch_stats st;
	struct rp_confine_port port;	/* the server's, for Landlock */
	void (*note)(void *, const char *);
	void *ctx;
	int quiet_fd;			/* /dev/null: libdebuginfod's verbose output */
};

/* libdebuginfod is opened only with --debuginfod, as libdw itself does: a stage without the
 * flag loads no HTTP or TLS library (libcurl and what it pulls in) at all. */
static struct {
	debuginfod_client *(*begin)(void);
	int (*find_debuginfo)(debuginfod_client *, const unsigned char *, int, char **);
	void (*set_progressfn)(debuginfod_client *, debuginfod_progressfn_t);
	void (*set_user_data)(debuginfod_client *, void *);
	void *(*get_user_data)(debuginfod_client *);
	void (*end)(debuginfod_client *);
	void (*set_verbose_fd)(debuginfod_client *, int);	/* optional */
} lib;

static int
load_lib(char *err, size_t errlen)
{
	void *h;

	if (lib.begin)
		return 0;
	if (!(h = dlopen("libdebuginfod.so.1", RTLD_NOW | RTLD_LOCAL)))
		return errbuf_fail(err, errlen, "--debuginfod needs libdebuginfod: %s", dlerror());
	*(void **)&lib.find_debuginfo = dlsym(h, "debuginfod_find_debuginfo");
	*(void **)&lib.set_progressfn = dlsym(h, "debuginfod_set_progressfn");
	*(void **)&lib.set_user_data = dlsym(h, "debuginfod_set_user_data");
	*(void **)&lib.get_user_data = dlsym(h, "debuginfod_get_user_data");
	*(void **)&lib.end = dlsym(h, "debuginfod_end");
	*(void **)&lib.begin = dlsym(h, "debuginfod_begin");
	*(void **)&lib.set_verbose_fd = dlsym(h, "debuginfod_set_verbose_fd");
	if (!lib.find_debuginfo || !lib.set_progressfn || !lib.set_user_data ||
	    !lib.get_user_data || !lib.end || !lib.begin) {
		lib.begin = NULL;
		return errbuf_fail(err, errlen, "libdebuginfod.so.1 lacks a function it should have");
	}
	return 0;
}

static double
now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Called by libdebuginfod as a transfer goes (a: bytes so far, b: expected, or 0). */
static int
progress(debuginfod_client *c, long a, long b)
{
	struct dbgfetch *f = lib.get_user_data(c);

	if ((a > 0 && (uint64_t)a > f->max_bytes) || (b > 0 && (uint64_t)b > f->max_bytes))
		f->over = 1;
	if (now() > f->deadline)
		f->late = 1;
	return f->over || f->late;
}

static void
setenv_u64(const char *name, uint64_t v)
{
	char b[32];

	snprintf(b, sizeof(b), "%" PRIu64, v);
	setenv(name, b, 1);
}

struct dbgfetch *
dbgfetch_new(const char *url, void (*note)(void *, const char *), void *ctx, char *err,
	     size_t errlen)
{
	const char *tmp = getenv("TMPDIR"), *cap = getenv("RUSTPROFILE_DEBUGINFOD_MAX_BYTES");
	struct dbgfetch *f;

	if (!debuginfod_url_ok(url)) {
		errbuf_fail(err, errlen, "--debuginfod '%s': not an http:// or https:// URL", url);
		return NULL;
	}
	if (!(f = calloc(1, sizeof(*f)))) {
		errbuf_fail(err, errlen, "out of memory");
		return NULL;
	}
	f->note = note;
	f->ctx = ctx;
	f->port.port = debuginfod_url_port(url);
	f->max_bytes = DBGFETCH_MAX_BYTES;
	if (cap && strtoull(cap, NULL, 10) > 0 && strtoull(cap, NULL, 10) < f->max_bytes)
		f->max_bytes = strtoull(cap, NULL, 10);
	snprintf(f->cache, sizeof(f->cache), "%s/rustprofile-debuginfod-XXXXXX",
		 tmp && tmp[0] == '/' ? tmp : "/tmp");
	if (!mkdtemp(f->cache)) {
		errbuf_fail(err, errlen, "cannot create a debuginfod cache in '%s': %s",
			    tmp && tmp[0] == '/' ? tmp : "/tmp", strerror(errno));
		free(f);
		return NULL;
	}
	/* libdebuginfod takes its settings from the environment: this URL only, this cache,
	 * the size cap announced to the server (X-DEBUGINFOD-MAXSIZE), no retries. */
	setenv("DEBUGINFOD_URLS", url, 1);
	setenv("DEBUGINFOD_CACHE_PATH", f->cache, 1);
	setenv_u64("DEBUGINFOD_MAXSIZE", f->max_bytes);
	setenv("DEBUGINFOD_RETRY_LIMIT", "0", 1);
	setenv_u64("DEBUGINFOD_TIMEOUT", DBGFETCH_BUDGET_SECONDS + 5);	/* the budget decides */
	unsetenv("DEBUGINFOD_PROGRESS");
	unsetenv("DEBUGINFOD_VERBOSE");
	if (load_lib(err, errlen) < 0) {
		dbgfetch_free(f);
		return NULL;
	}
	if (!(f->c = lib.begin())) {
		errbuf_fail(err, errlen, "cannot start the debuginfod client");
		dbgfetch_free(f);
		return NULL;
	}
	lib.set_user_data(f->c, f);
	lib.set_progressfn(f->c, progress);
	/* libdebuginfod writes its verbose lines with dprintf to fd -1 when it has none, and
	 * glibc 2.36's dprintf leaks its 8 KiB buffer on a write that fails: /dev/null takes
	 * them (opened now, before the stage confines itself). */
	if (lib.set_verbose_fd && (f->quiet_fd = open("/dev/null", O_WRONLY | O_CLOEXEC)) >= 0)
		lib.set_verbose_fd(f->c, f->quiet_fd);
	f->deadline = now() + DBGFETCH_BUDGET_SECONDS;
	return f;
}

const char *
dbgfetch_cache_dir(const struct dbgfetch *f)
{
	return f->cache;
}

void
dbgfetch_confine(struct dbgfetch *f, struct rp_confine_path *p, struct rp_confine_spec *spec)
{
	p[spec->npaths++] = (struct rp_confine_path){ f->cache, RP_CONFINE_READ | RP_CONFINE_WRITE };
	spec->npaths += rp_confine_network_paths(p + spec->npaths);
	spec->connect = &f->port;
	spec->nconnect = 1;
}

void
dbgfetch_new_budget(struct dbgfetch *f)
{
	if (f)
		f->deadline = now() + DBGFETCH_BUDGET_SECONDS;
}

const struct dbgfetch_stats *
dbgfetch_stats(const struct dbgfetch *f)
{
	return &f->st;
}

static void
say(struct dbgfetch *f, const char *hex, const char *why)
{
	char msg[300];

	if (!f->note)
		return;
	snprintf(msg, sizeof(msg), "debuginfod: no debug file for build id %s: %s", hex, why);
	f->note(f->ctx, msg);
}

/* Counts a failed fetch and says why. */
static void
failed(struct dbgfetch *f, const char *hex, int rc)
{
	char why[120];

	if (f->over || rc == -EFBIG) {
		f->st.oversized++;
		snprintf(why, sizeof(why), "larger than %" PRIu64 " bytes, not kept", f->max_bytes);
	} else if (f->late) {
		f->st.out_of_time++;
		snprintf(why, sizeof(why), "the %d s budget is spent", DBGFETCH_BUDGET_SECONDS);
	} else if (rc == -ENOENT) {
		f->st.not_found++;
		snprintf(why, sizeof(why), "the server has none");
	} else {
		f->st.failed++;
		snprintf(why, sizeof(why), "%s", strerror(-rc));
	}
	say(f, hex, why);
}

char *
dbgfetch_debuginfo(struct dbgfetch *f, const uint8_t *id, size_t len)
{
	char hex[2 * 64 + 1], *path = NULL;
	struct stat st;
	double left = f->deadline - now();
	int fd;

	if (len < 2 || len > 64)
		return NULL;
	build_id_hex(id, len, hex);
	f->over = f->late = 0;
	f->st.queried++;
	if (left <= 0) {
		f->late = 1;
		failed(f, hex, 0);
		return NULL;
	}
	setenv_u64("DEBUGINFOD_MAXTIME", (uint64_t)left + 5);
	f->st.requests++;
	fd = lib.find_debuginfo(f->c, id, (int)len, &path);
	if (fd < 0) {
		failed(f, hex, fd);
		return NULL;
	}
	/* A server that does not honour the announced cap sent it whole: not used. */
	if (fstat(fd, &st) < 0 || (uint64_t)st.st_size > f->max_bytes) {
		f->over = 1;
		unlink(path);
		free(path);
		close(fd);
		failed(f, hex, -EFBIG);
		return NULL;
	}
	close(fd);
	f->st.fetched++;
	f->st.bytes_fetched += (uint64_t)st.st_size;
	return path;
}

/* The cache is two levels deep: CACHE/<build id>/<file>. */
static void
remove_tree(const char *dir, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[4096 + 512];

	while (d && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
		if (unlink(p) < 0 && errno == EISDIR && depth < 3)
			remove_tree(p, depth + 1);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

void
dbgfetch_free(struct dbgfetch *f)
{
	if (!f)
		return;
	if (f->c)
		lib.end(f->c);
	if (f->quiet_fd > 0)
		close(f->quiet_fd);
	remove_tree(f->cache, 0);
	free(f);
}
