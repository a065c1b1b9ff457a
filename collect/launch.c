/*
 * launch: runs the command as collect's child, stopped at its first instruction.
 *
 * The child asks to be traced and executes the command; the kernel stops it with SIGTRAP
 * right after the exec succeeded, so the process already is the new image when preflight
 * and attachment look at it, and none of its instructions has run.  Detaching lets it go.
 */
#include <err.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collect.h"

static void
child(char **argv, int stdout_fd)
{
	sigset_t none;

	/* collect blocks SIGINT/SIGTERM for its signalfd; the command must see them. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	/* Our stdout is the event stream: the command writes where the caller said. */
	if (dup2(stdout_fd >= 0 ? stdout_fd : 2, 1) < 0)
		_exit(126);
	if (stdout_fd > 2)
		close(stdout_fd);
	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
		_exit(126);
	execvp(argv[0], argv);
	fprintf(stderr, "collect: cannot run '%s': %s\n", argv[0], strerror(errno));
	_exit(127);
}

pid_t
launch_start(char **argv, int stdout_fd)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		err(1, "fork");
	if (pid == 0)
		child(argv, stdout_fd);
	if (stdout_fd > 2)
		close(stdout_fd);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			err(1, "waitpid");
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
