/* confine: a stage's privileges narrowed to what it needs (see confine.h). */
#include "confine.h"
#include "errbuf.h"
#include "sanitizer.h"

#include <cap-ng.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The Landlock ABI, defined here: the build machine's headers may be older than the
 * kernel that runs the stage (Debian 12's know ABI 2).  Values from the kernel's uapi
 * <linux/landlock.h>; the syscall numbers are the same on every architecture. */
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_add_rule
#define __NR_landlock_add_rule 445
#endif
#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif
#define LL_CREATE_RULESET_VERSION (1u << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_RULE_NET_PORT 2

#define LL_FS_EXECUTE (1ull << 0)
#define LL_FS_WRITE_FILE (1ull << 1)
#define LL_FS_READ_FILE (1ull << 2)
#define LL_FS_READ_DIR (1ull << 3)
#define LL_FS_REMOVE_DIR (1ull << 4)
#define LL_FS_REMOVE_FILE (1ull << 5)
#define LL_FS_MAKE_DIR (1ull << 7)
#define LL_FS_MAKE_REG (1ull << 8)
#define LL_FS_ABI1 ((1ull << 13) - 1)   /* EXECUTE .. MAKE_SYM */
#define LL_FS_REFER (1ull << 13)        /* ABI 2 */
#define LL_FS_TRUNCATE (1ull << 14)     /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ull << 15)    /* ABI 5 */
#define LL_FS_RESOLVE_UNIX (1ull << 16) /* ABI 9 */
#define LL_NET_BIND_TCP (1ull << 0)     /* ABI 4 */
#define LL_NET_CONNECT_TCP (1ull << 1)
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ull << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ull << 1)

struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;    /* ABI 4; a kernel that predates it wants it 0 */
	uint64_t scoped;                /* ABI 6; the same */
};

static uint16_t connect_port;   /* rp_confine_allow_connect */

void
rp_confine_allow_connect(uint16_t port)
{
	connect_port = port;
}

struct ll_net_port_attr {
	uint64_t allowed_access;
	uint64_t port;
};

struct ll_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

#define SELFTEST_ENV "RUSTPROFILE_CONFINE_SELFTEST"

/* glibc may dlopen from these at run time: libgcc_s when a thread exits or is cancelled,
 * gconv modules, NSS.  A missing one is skipped. */
static const char *const lib_dirs[] = {
	"/lib", "/lib32", "/lib64", "/libx32", "/usr/lib", "/usr/lib32", "/usr/lib64",
	"/usr/libx32", "/usr/local/lib",
};

int
rp_landlock_abi(void)
{
	long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);

	return abi > 0 ? (int)abi : 0;
}

/* The threads of this process, from /proc/self/status; 0 when it cannot be read. */
static int
thread_count(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	int n = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %d", &n) == 1)
			break;
	fclose(f);
	return n;
}

/* Every set emptied.  Without CAP_SETPCAP (a stage not started as root) libcap-ng
 * leaves the bounding set as it is and says so (-4): with nothing permitted and
 * no-new-privs, no execve can raise a capability from it. */
static int
drop_capabilities(char *err, size_t errlen)
{
	capng_clear(CAPNG_SELECT_ALL);
	int rc = capng_apply(CAPNG_SELECT_ALL);
	if (rc < 0 && rc != -4)
		return errbuf_fail(err, errlen, "cannot drop capabilities (libcap-ng error %d)", rc);
	/* Checked against the kernel's view, not libcap-ng's copy. */
	capng_clear(CAPNG_SELECT_ALL);
	if (capng_get_caps_process() < 0 ||
	    capng_have_capabilities(CAPNG_SELECT_CAPS) != CAPNG_NONE)
		return errbuf_fail(err, errlen, "cannot drop capabilities: some are still held");
	return 0;
}

static uint64_t
fs_handled(int abi)
{
	uint64_t m = LL_FS_ABI1;

	if (abi >= 2)
		m |= LL_FS_REFER;
	if (abi >= 3)
		m |= LL_FS_TRUNCATE;
	if (abi >= 5)
		m |= LL_FS_IOCTL_DEV;
	if (abi >= 9)
		m |= LL_FS_RESOLVE_UNIX;
	return m;
}

/* The rights a path grants, by its type (a rule on a file may hold file rights only). */
static uint64_t
rights(unsigned access, int is_dir, int exec)
{
	uint64_t r = 0;

	if (access & RP_CONFINE_READ)
		r |= LL_FS_READ_FILE | (is_dir ? LL_FS_READ_DIR : 0);
	if (access & RP_CONFINE_WRITE)
		r |= LL_FS_WRITE_FILE | LL_FS_TRUNCATE |
		     (is_dir ? LL_FS_REMOVE_FILE | LL_FS_REMOVE_DIR | LL_FS_MAKE_REG |
				       LL_FS_MAKE_DIR : 0);
	if (exec)
		r |= LL_FS_EXECUTE;
	return r;
}

static int
add_rule(int rfd, uint64_t handled, const char *path, unsigned access, int exec, char *err,
	 size_t errlen)
{
	struct stat st;
	int fd = open(path, O_PATH | O_CLOEXEC);

	if (fd < 0) {
		if (errno == ENOENT && (access & RP_CONFINE_OPTIONAL))
			return 0;
		return errbuf_fail(err, errlen, "cannot open '%s': %s", path, strerror(errno));
	}
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		return errbuf_fail(err, errlen, "cannot open '%s': %s", path, strerror(e));
	}
	struct ll_path_beneath_attr pb = {
		.allowed_access = rights(access, S_ISDIR(st.st_mode), exec) & handled,
		.parent_fd = fd,
	};
	long rc = syscall(__NR_landlock_add_rule, rfd, LL_RULE_PATH_BENEATH, &pb, 0);
	int e = errno;
	close(fd);
	/* A pipe or socket named through /dev/fd (emit-svg --folded <(zcat f.gz)) lives on an
	 * internal file system: Landlock takes no rule for it and never refuses opening it. */
	if (rc < 0 && e == EBADFD && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
		return 0;
	if (rc < 0)
		return errbuf_fail(err, errlen, "cannot confine: landlock_add_rule '%s': %s", path,
			    strerror(e));
	return 0;
}

static int
add_rules(int rfd, uint64_t handled, const struct rp_confine_spec *spec, char *err,
	  size_t errlen)
{
	for (size_t i = 0; i < spec->npaths; i++)
		if (add_rule(rfd, handled, spec->paths[i].path, spec->paths[i].access, 0, err,
			     errlen) < 0)
			return -1;
	for (size_t i = 0; i < sizeof(lib_dirs) / sizeof(lib_dirs[0]); i++)
		if (add_rule(rfd, handled, lib_dirs[i], RP_CONFINE_READ | RP_CONFINE_OPTIONAL, 1,
			     err, errlen) < 0)
			return -1;
#ifdef RP_SANITIZER
	/* LeakSanitizer stops the world at exit from a tracer task that lists the threads
	 * through /proc/<pid>/task ("Can't open /proc/<pid>/task" and a fatal error without
	 * this rule), and a report's symbolizer reads the executable.  Non-dumpable is no
	 * obstacle: LeakSanitizer makes the process dumpable for the time it ptraces it,
	 * and the tracer shares the stage's Landlock domain (tests/unit/confine_test.c). */
	if (add_rule(rfd, handled, "/proc/self", RP_CONFINE_READ, 0, err, errlen) < 0 ||
	    add_rule(rfd, handled, "/proc/self/exe", RP_CONFINE_READ, 0, err, errlen) < 0)
		return -1;
#endif
	return 0;
}

static int
add_ports(int rfd, const struct rp_confine_spec *spec, char *err, size_t errlen)
{
	for (size_t i = 0; i < spec->nconnect; i++) {
		struct ll_net_port_attr a = { LL_NET_CONNECT_TCP, spec->connect[i].port };
		if (syscall(__NR_landlock_add_rule, rfd, LL_RULE_NET_PORT, &a, 0) < 0)
			return errbuf_fail(err, errlen, "cannot confine: TCP port %u: %s",
					   spec->connect[i].port, strerror(errno));
	}
	return 0;
}

size_t
rp_confine_network_paths(struct rp_confine_path *p)
{
	static const char *const files[RP_CONFINE_NET_PATHS] = {
		"/etc/hosts", "/etc/resolv.conf", "/etc/nsswitch.conf", "/etc/host.conf",
		"/etc/gai.conf", "/etc/ssl", "/usr/lib/ssl", "/usr/share/ca-certificates",
		"/etc/os-release", "/usr/lib/os-release",
	};

	for (size_t i = 0; i < RP_CONFINE_NET_PATHS; i++)
		p[i] = (struct rp_confine_path){ files[i], RP_CONFINE_READ | RP_CONFINE_OPTIONAL };
	return RP_CONFINE_NET_PATHS;
}

/* 0 when confined; 1 when Landlock is not available; -1 on an error. */
static int
landlock(const struct rp_confine_spec *spec, char *err, size_t errlen)
{
	long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);

	if (abi < 0 && (errno == ENOSYS || errno == EOPNOTSUPP))
		return 1;
	if (abi < 0)
		return errbuf_fail(err, errlen, "cannot confine: landlock ABI: %s", strerror(errno));
	/* A newer ABI than this file knows gets the rights this file knows. */
	struct ll_ruleset_attr attr = { .handled_access_fs = fs_handled((int)abi) };
	if (abi >= 4)
		attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
	if (abi >= 6)
		attr.scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
	int rfd = (int)syscall(__NR_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (rfd < 0)
		return errbuf_fail(err, errlen, "cannot confine: landlock_create_ruleset: %s",
			    strerror(errno));
	int rc = add_rules(rfd, attr.handled_access_fs, spec, err, errlen);
	if (rc == 0 && abi >= 4)
		rc = add_ports(rfd, spec, err, errlen);
	if (rc == 0 && abi >= 4 && connect_port) { /* rp_confine_allow_connect */
		struct rp_confine_port one = { .port = connect_port };
		struct rp_confine_spec only = { .connect = &one, .nconnect = 1 };
		rc = add_ports(rfd, &only, err, errlen);
	}
	if (rc == 0 && syscall(__NR_landlock_restrict_self, rfd, 0) < 0)
		rc = errbuf_fail(err, errlen, "cannot confine: landlock_restrict_self: %s",
			  strerror(errno));
	close(rfd);
	return rc;
}

/* The test hook: one line per attempt, and nothing created stays. */
static void
selftest(const char *prog)
{
	const char *dir = getenv(SELFTEST_ENV);
	char path[4096];
	int fd;

	if (!dir)
		return;
	if (dir[0] != '/')
		dir = "/tmp";
	snprintf(path, sizeof(path), "%s/rustprofile-confine-selftest-%d", dir, (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd >= 0) {
		fprintf(stderr, "%s: confine selftest: create %s: created\n", prog, path);
		close(fd);
		unlink(path);
	} else {
		fprintf(stderr, "%s: confine selftest: create %s: %s\n", prog, path,
			strerror(errno));
	}
	fd = open("/etc/shadow", O_RDONLY | O_CLOEXEC);
	fprintf(stderr, "%s: confine selftest: open /etc/shadow: %s\n", prog,
		fd >= 0 ? "opened" : strerror(errno));
	if (fd >= 0)
		close(fd);
}

int
rp_confine(const char *prog, const struct rp_confine_spec *spec, char *err, size_t errlen)
{
	int n = thread_count();

	if (n > 1)
		return errbuf_fail(err, errlen, "cannot confine: %d threads run already (capabilities "
			    "and Landlock are per thread)", n);
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return errbuf_fail(err, errlen, "cannot confine: PR_SET_DUMPABLE: %s", strerror(errno));
	if (drop_capabilities(err, errlen) < 0)
		return -1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return errbuf_fail(err, errlen, "cannot confine: PR_SET_NO_NEW_PRIVS: %s",
			    strerror(errno));
	int rc = landlock(spec, err, errlen);
	if (rc < 0)
		return -1;
	if (rc == 1 && geteuid() == 0)
		return errbuf_fail(err, errlen, "cannot confine a stage running as uid 0: Landlock is "
			    "not available");
	if (!spec->no_selftest)
		selftest(prog);
	return 0;
}
