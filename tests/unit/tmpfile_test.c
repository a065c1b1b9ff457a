/* lib/tmpfile: temporary files are created beside their final name, and a SIGTERM, SIGHUP
 * or SIGPIPE after tmpfile_remove_on_term, or an exit (an errx on an error path), removes
 * the ones the process still owns, and SIGPIPE the ones it handed on too. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "tmpfile.h"

static int
exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* The child ends by signal sig, or by exit(1) when sig is 0. */
static void
one(int sig)
{
	char dir[] = "/tmp/tmpfile_test.XXXXXX";
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		exit(1);
	}
	/* The paths are made in the child; it sends them through a pipe. */
	int fds[2];
	if (pipe(fds) < 0) {
		perror("pipe");
		exit(1);
	}
	pid_t pid = fork();
	if (pid == 0) {
		struct tmpfile kept, handed, dropped;
		close(fds[0]);
		tmpfile_remove_on_term();
		if (tmpfile_create(&handed, dir, "handed.svg") < 0 ||
		    tmpfile_write(&handed, "h", 1) < 0 || tmpfile_finish(&handed) < 0 ||
		    tmpfile_create(&kept, dir, "kept.svg") < 0 || tmpfile_write(&kept, "k", 1) < 0 ||
		    tmpfile_create(&dropped, dir, "dropped.svg") < 0)
			_exit(2);
		char buf[2 * 300];
		int n = snprintf(buf, sizeof(buf), "%s\n%s\n", handed.path, kept.path);
		/* Handed on (as after an emitter's window end, lib/emitter.c): no longer this
		 * process's to remove. */
		tmpfile_release(&handed);
		tmpfile_discard(&dropped);
		if (write(fds[1], buf, (size_t)n) != n)
			_exit(2);
		close(fds[1]);
		if (!sig)
			exit(1);
		raise(sig);
		_exit(3); /* not reached: the signal ends the process */
	}
	close(fds[1]);
	char buf[2 * 300 + 1] = { 0 };
	size_t got = 0;
	ssize_t r;
	while (got < sizeof(buf) - 1 && (r = read(fds[0], buf + got, sizeof(buf) - 1 - got)) > 0)
		got += (size_t)r;
	int status = 0;
	waitpid(pid, &status, 0);
	CHECK(sig ? WIFSIGNALED(status) && WTERMSIG(status) == sig :
		    WIFEXITED(status) && WEXITSTATUS(status) == 1);
	char *handed = buf, *nl = strchr(buf, '\n'), *kept = nl ? nl + 1 : NULL;
	CHECK(nl && kept && strchr(kept, '\n'));
	if (nl && kept && strchr(kept, '\n')) {
		*nl = 0;
		*strchr(kept, '\n') = 0;
		CHECK(strstr(handed, "/.handed.svg.tmp-") != NULL);
		/* Handed on, it is the next stage's, unless the output broke (SIGPIPE): then
		 * no commit will get its frame. */
		CHECK(exists(handed) == (sig != SIGPIPE));
		CHECK(strstr(kept, "/.kept.svg.tmp-") != NULL);
		CHECK(!exists(kept));
		unlink(handed);
	}
	CHECK(rmdir(dir) == 0); /* nothing else was left: the discarded file went at once */
}

int
main(void)
{
	one(SIGTERM);
	one(SIGHUP);
	one(SIGPIPE);
	one(0);
	printf("tmpfile_test: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
