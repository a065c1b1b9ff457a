/* lib/confine: each case confines a forked child (confinement cannot be undone) and the
 * child's checks decide its exit status.  Cases that need Landlock, root or a sanitizer
 * build say so and are skipped elsewhere. */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "confine.h"

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif

static char base[] = "/tmp/confine_test.XXXXXX";
static char out[4200], ro[4200], other[4200];

/* Runs fn in a child; the child's exit status (its failed checks) is returned, or -1 when
 * it did not exit normally. */
static int
in_child(void (*fn)(void))
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		fn();
		fflush(NULL);
		_exit(failed > 100 ? 100 : failed);
	}
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* errno of creating path (0 when it worked; the file is removed again). */
static int
create_errno(const char *dir, const char *name)
{
	char path[4300];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return errno;
	close(fd);
	unlink(path);
	return 0;
}

static int
open_errno(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* The hex value of a "Name:" line of /proc/self/status, or ~0 when missing. */
static unsigned long long
status_hex(const char *name)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	unsigned long long v = ~0ull;
	size_t n = strlen(name);
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, name, n) && line[n] == ':')
			v = strtoull(line + n + 1, NULL, 16);
	if (f)
		fclose(f);
	return v;
}

static int
confine(const struct rp_confine_path *p, size_t n, char *err, size_t errlen)
{
	struct rp_confine_spec spec = { p, n, 0, NULL, 0 };
	return rp_confine("confine_test", &spec, err, errlen);
}

static void
case_rules(void)
{
	const struct rp_confine_path p[] = {
		{ out, RP_CONFINE_READ | RP_CONFINE_WRITE },
		{ ro, RP_CONFINE_READ },
		{ "/nonexistent/confine_test", RP_CONFINE_READ | RP_CONFINE_OPTIONAL },
	};
	char err[512] = "";
	int rc = confine(p, 3, err, sizeof(err));
	CHECK(rc == 0);
	if (rc < 0)
		fprintf(stderr, "confine: %s\n", err);
	CHECK(create_errno(out, "made") == 0);
	CHECK(create_errno(other, "made") == EACCES);
	CHECK(create_errno(ro, "made") == EACCES);
	CHECK(open_errno(ro, O_RDONLY | O_DIRECTORY) == 0);
	CHECK(open_errno("/etc/passwd", O_RDONLY) == EACCES);
	CHECK(open_errno("/proc/self/status", O_RDONLY) ==
#ifdef SANITIZED
	      0
#else
	      EACCES
#endif
	);
	/* A library directory may be read. */
	CHECK(open_errno("/usr/lib", O_RDONLY | O_DIRECTORY) == 0);
	CHECK(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1);
	CHECK(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0);
	/* TCP: no rule allows a connect, so it fails before the port is tried. */
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(9),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	CHECK(s >= 0 && connect(s, (struct sockaddr *)&a, sizeof(a)) < 0 && errno == EACCES);
	close(s);
	/* Signals: scoped to the stage's own domain (ABI 6). */
	if (rp_landlock_abi() >= 6)
		CHECK(kill(getppid(), 0) < 0 && errno == EPERM);
}

static void
case_caps(void)
{
	char err[512];
	/* /proc/self is allowed so that the sets can be read back. */
	const struct rp_confine_path p[] = { { "/proc/self", RP_CONFINE_READ } };
	CHECK(confine(p, 1, err, sizeof(err)) == 0);
	CHECK(status_hex("CapEff") == 0);
	CHECK(status_hex("CapPrm") == 0);
	CHECK(status_hex("CapInh") == 0);
	CHECK(status_hex("CapAmb") == 0);
	CHECK(status_hex("CapBnd") == 0);
	CHECK(status_hex("NoNewPrivs") == 1);
}

static void
case_missing(void)
{
	const struct rp_confine_path p[] = { { "/nonexistent/confine_test", RP_CONFINE_READ } };
	char err[512] = "";
	CHECK(confine(p, 1, err, sizeof(err)) < 0);
	CHECK(!strcmp(err, "cannot open '/nonexistent/confine_test': No such file or directory"));
}

static void *
idle(void *arg)
{
	pause();
	return arg;
}

static void
case_threads(void)
{
	pthread_t t;
	char err[512] = "";
	CHECK(pthread_create(&t, NULL, idle, NULL) == 0);
	CHECK(confine(NULL, 0, err, sizeof(err)) < 0);
	CHECK(strstr(err, "2 threads run already") != NULL);
}

/* Makes the Landlock syscalls fail with ENOSYS, as on a kernel without Landlock. */
static int
no_landlock(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 444, 0, 2),
		BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, 446, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };
	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
			       prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0 ? -1 : 0;
}

static void
case_root_without_landlock(void)
{
	char err[512] = "";
	CHECK(no_landlock() == 0);
	CHECK(rp_landlock_abi() == 0);
	CHECK(confine(NULL, 0, err, sizeof(err)) < 0);
	CHECK(!strcmp(err, "cannot confine a stage running as uid 0: Landlock is not available"));
}

static void
case_user_without_landlock(void)
{
	char err[512] = "";
	CHECK(setresgid(65534, 65534, 65534) == 0 && setresuid(65534, 65534, 65534) == 0);
	CHECK(no_landlock() == 0);
	CHECK(confine(NULL, 0, err, sizeof(err)) == 0);
	/* Best effort: the kernel's permission checks are all there is. */
	CHECK(create_errno(other, "made") == 0);
	CHECK(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1);
}

#ifdef SANITIZED
static void *volatile leaked;

/* A leak after confining must still be found at exit: LeakSanitizer needs ptrace and
 * /proc/self, which confinement must leave it. */
static void
case_leak_found(void)
{
	char err[512];
	int fd = open(out, O_RDONLY | O_DIRECTORY);
	dup2(openat(fd, "leak.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644), 2);
	const struct rp_confine_path p[] = { { out, RP_CONFINE_READ | RP_CONFINE_WRITE } };
	if (confine(p, 1, err, sizeof(err)) < 0)
		_exit(99);
	leaked = malloc(4321);
	leaked = NULL;
	exit(0);
}
#endif

int
main(void)
{
	int root = geteuid() == 0, landlock = rp_landlock_abi() > 0;

	if (!mkdtemp(base)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(out, sizeof(out), "%s/out", base);
	snprintf(ro, sizeof(ro), "%s/ro", base);
	snprintf(other, sizeof(other), "%s/other", base);
	if (chmod(base, 0755) < 0 || mkdir(out, 0777) < 0 || mkdir(ro, 0777) < 0 ||
	    mkdir(other, 0777) < 0 || chmod(other, 0777) < 0) {
		perror("mkdir");
		return 1;
	}
	CHECK(in_child(case_missing) == 0);
	CHECK(in_child(case_threads) == 0);
	if (landlock) {
		CHECK(in_child(case_rules) == 0);
		CHECK(in_child(case_caps) == 0);
	} else {
		fprintf(stderr, "confine_test: no Landlock here: rule cases skipped\n");
	}
	if (root) {
		CHECK(in_child(case_root_without_landlock) == 0);
		CHECK(in_child(case_user_without_landlock) == 0);
	} else {
		fprintf(stderr, "confine_test: not root: uid 0 cases skipped\n");
	}
#ifdef SANITIZED
	if (landlock) {
		char path[4300], text[8192] = "";
		int st = in_child(case_leak_found);
		CHECK(st != 0 && st != 99);
		snprintf(path, sizeof(path), "%s/leak.txt", out);
		FILE *f = fopen(path, "r");
		if (f) {
			text[fread(text, 1, sizeof(text) - 1, f)] = 0;
			fclose(f);
		}
		CHECK(strstr(text, "detected memory leaks") && strstr(text, "4321 byte"));
		unlink(path);
	}
#endif
	rmdir(out);
	rmdir(ro);
	rmdir(other);
	rmdir(base);
	printf("confine_test: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
