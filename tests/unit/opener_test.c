/* unwind/opener: a confined process gets ELF files outside its rules through the helper,
 * and nothing else: not a text file, not a device, not a FIFO (without blocking). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "confine.h"
#include "../../unwind/opener.h"

static char dir[] = "/tmp/opener_test.XXXXXX";
static char elf[4200], text[4200], fifo[4200];

/* 1 when fd reads as an ELF file. */
static int
is_elf(int fd)
{
	char m[4];
	int ok = fd >= 0 && pread(fd, m, 4, 0) == 4 && !memcmp(m, "\177ELF", 4);
	if (fd >= 0)
		close(fd);
	return ok;
}

static void
confined(void)
{
	char err[512];
	struct rp_confine_spec none = { NULL, 0, 0, NULL, 0 };

	CHECK(opener_start(err, sizeof(err)) == 0);
	if (rp_confine("opener_test", &none, err, sizeof(err)) < 0) {
		fprintf(stderr, "confine: %s\n", err);
		CHECK(0);
		return;
	}
	/* The stage itself may open none of them. */
	CHECK(open(elf, O_RDONLY) < 0 && errno == EACCES);
	CHECK(is_elf(opener_open(elf)));
	CHECK(opener_open(text) < 0 && errno == EACCES);
	CHECK(opener_open("/dev/null") < 0 && errno == EACCES);
	CHECK(opener_open(fifo) < 0 && errno == EACCES);
	CHECK(opener_open("/proc/self/status") < 0 && errno == EACCES);
	CHECK(opener_open("/nonexistent/opener_test") < 0 && errno == ENOENT);
	if (access("/etc/shadow", F_OK) == 0)
		CHECK(opener_open("/etc/shadow") < 0 && errno == EACCES);
}

/* Copies the running program: an ELF file in a directory no rule allows. */
static int
copy_self(const char *to)
{
	char buf[65536];
	ssize_t n;
	int in = open("/proc/self/exe", O_RDONLY), out = open(to, O_WRONLY | O_CREAT, 0644);
	while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			break;
	close(in);
	return close(out);
}

int
main(void)
{
	if (rp_landlock_abi() == 0) {
		printf("opener_test: no Landlock here: skipped\n");
		return 0;
	}
	if (!mkdtemp(dir) || chmod(dir, 0755) < 0) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(elf, sizeof(elf), "%s/module", dir);
	snprintf(text, sizeof(text), "%s/notes.txt", dir);
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	FILE *f = fopen(text, "w");
	if (!f || fputs("not a module\n", f) < 0 || fclose(f) != 0 || copy_self(elf) < 0 ||
	    mkfifo(fifo, 0644) < 0) {
		perror("setup");
		return 1;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		confined();
		_exit(failed != 0);
	}
	int st;
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	unlink(elf);
	unlink(text);
	unlink(fifo);
	rmdir(dir);
	printf("opener_test: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
