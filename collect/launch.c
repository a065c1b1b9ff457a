/*
 * launch: runs the command as collect's child, stopped at its first instruction.
 *
 * The child asks to be traced and executes the command; the kernel stops it with SIGTRAP
 * right after the exec succeeded, so the process already is the new image when preflight
 * and attachment look at it, and none of its instructions has run.  Detaching lets it go.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "launch.h"

/* Puts fd where it must be; a descriptor equal to where is left as it is. */
static int
place(int fd, int where)
{
	if (fd < 0 || fd == where)
		return 0;
	return dup2(fd, where) < 0 ? -1 : 0;
}

/* The child tells the parent why it could not run the command through report (close on
 * exec: a successful exec leaves it empty), so that the failure is the parent's one line. */
static void
child(char **argv, int stdout_fd, int stderr_fd, int report)
{
	sigset_t none;
	int e;

	/* collect blocks SIGINT/SIGTERM for its signalfd, and a driver's background job has
	 * SIGINT and SIGQUIT ignored: the command must see them as if run directly. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	/* Our stdout is the event stream: the command writes where the caller said. */
	if (place(stdout_fd >= 0 ? stdout_fd : (stderr_fd >= 0 ? stderr_fd : 2), 1) < 0 ||
	    place(stderr_fd, 2) < 0) {
		e = errno;
		goto fail;
	}
	if (stdout_fd > 2)
		close(stdout_fd);
	if (stderr_fd > 2 && stderr_fd != stdout_fd)
		close(stderr_fd);
	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0) {
		e = errno;
		goto fail;
	}
	execvp(argv[0], argv);
	e = errno;
fail:
	if (write(report, &e, sizeof(e)) < 0)
		_exit(126);
	_exit(127);
}

pid_t
launch_start(char **argv, int stdout_fd, int stderr_fd)
{
	int status, report[2], e = 0;

	if (pipe2(report, O_CLOEXEC) < 0)
		err(1, "pipe");
	pid_t pid = fork();

	if (pid < 0)
		err(1, "fork");
	if (pid == 0) {
		close(report[0]);
		child(argv, stdout_fd, stderr_fd, report[1]);
	}
	close(report[1]);
	if (stdout_fd > 2)
		close(stdout_fd);
	if (stderr_fd > 2 && stderr_fd != stdout_fd)
		close(stderr_fd);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			err(1, "waitpid");
	/* The exec either happened (the child stops at it, report closes) or failed. */
	ssize_t n;
	while ((n = read(report[0], &e, sizeof(e))) < 0 && errno == EINTR)
		;
	close(report[0]);
	if (n == (ssize_t)sizeof(e) && WIFEXITED(status))
		errx(1, "launch: cannot run '%s': %s", argv[0], strerror(e));
	if (WIFEXITED(status))
		errx(1, "launch: '%s' did not start (exit status %d)", argv[0],
		     WEXITSTATUS(status));
	if (!WIFSTOPPED(status) || WSTOPSIG(status) != SIGTRAP) {
		kill(pid, SIGKILL);
		errx(1, "launch: '%s' did not stop at its exec", argv[0]);
	}
	return pid;
}

void
launch_resume(pid_t pid)
{
	if (ptrace(PTRACE_DETACH, pid, NULL, NULL) < 0)
		err(1, "launch: cannot resume pid %d", (int)pid);
}

int
launch_reap(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, WNOHANG) != pid)
		return -1;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}
