/* The preflight's own checks, in record's order, and what /proc says of the target. */
#include <errno.h>
#include <fnmatch.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "procfs.h"
#include "report.h"

void
report_msg(struct msgs *m, const char *fmt, ...)
{
	char *s;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0) {
		fputs("check: out of memory\n", stderr);
		exit(1);
	}
	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 8;
		char **v = realloc(m->v, cap * sizeof(*v));
		if (!v) {
			fputs("check: out of memory\n", stderr);
			exit(1);
		}
		m->v = v;
		m->cap = cap;
	}
	m->v[m->n++] = s;
}

static void
add_file(char **v, size_t *n, const char *path)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp(v[i], path))
			return;
	if (*n < CHECK_MAX_FILES && (v[*n] = strdup(path)))
		++*n;
}

static int
jitdump_map(const struct procmap *m, void *arg)
{
	struct report *r = arg;
	const char *base = strrchr(m->path, '/');
	if (base && fnmatch("jit-*.dump", base + 1, 0) == 0)
		add_file(r->jitdumps, &r->njitdumps, m->path);
	return 0;
}

/* perf's JIT conventions: a /tmp/perf-PID.map the runtime writes, and jit-PID.dump files
 * it maps so that perf sees them. */
static void
jit_files(struct report *r)
{
	char path[PATH_MAX], shown[64];
	struct stat st;
	snprintf(shown, sizeof(shown), "/tmp/perf-%ld.map", (long)procfs_ns_pid(r->pid));
	snprintf(path, sizeof(path), "/proc/%d/root%s", (int)r->pid, shown);
	if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
		add_file(r->perf_maps, &r->nperf_maps, shown);
	procfs_maps(r->pid, jitdump_map, r);
}

static void
check_options(struct report *r)
{
	for (size_t i = 0; i < r->nsymbol_dirs; i++) {
		struct stat st;
		if (stat(r->symbol_dirs[i], &st) < 0)
			report_msg(&r->errors, "--symbol-dir %s: %s", r->symbol_dirs[i],
				   strerror(errno));
		else if (!S_ISDIR(st.st_mode))
			report_msg(&r->errors, "--symbol-dir %s: not a directory",
				   r->symbol_dirs[i]);
	}
}

void
report_target(struct report *r)
{
	char why[320];
	r->threads = -1;
	r->perf.status = CAP_UNAVAILABLE;
	snprintf(r->perf.detail, sizeof(r->perf.detail), "not probed: no target");
	check_options(r);
	r->root = preflight_root(why, sizeof(why)) == 0;
	if (!r->root)
		report_msg(&r->errors, "%s", why);
	if (preflight_kernel(&r->pf, why, sizeof(why)) < 0)
		report_msg(&r->errors, "%s", why);
	r->kernel_known = r->pf.major > 0;
	if (preflight_target(r->pid, &r->pf, why, sizeof(why)) < 0) {
		report_msg(&r->errors, "%s", why);
		if (kill(r->pid, 0) < 0 && errno == ESRCH)
			return; /* nothing more to read about it */
	}
	r->e_machine = r->pf.e_machine;
	if (procfs_exe(r->pid, r->executable, sizeof(r->executable)) < 0)
		report_msg(&r->errors, "target: cannot read /proc/%d/exe: %s", (int)r->pid,
			   strerror(errno));
	procfs_comm(r->pid, r->pid, r->comm, sizeof(r->comm));
	if (preflight_threads(r->pid, &r->pf, why, sizeof(why)) < 0)
		report_msg(&r->errors, "%s", why);
	if (r->pf.nthreads > 0)
		r->threads = r->pf.nthreads;
	r->perf.status = CAP_OK;
	r->perf.detail[0] = 0;
	if (preflight_perf(r->pid, r->perf.detail, sizeof(r->perf.detail)) < 0) {
		r->perf.status = CAP_UNAVAILABLE;
		report_msg(&r->errors, "%s", r->perf.detail);
	}
	jit_files(r);
}
