/* launch: the command collect starts itself, stopped right after its exec. */
#ifndef COLLECT_LAUNCH_H
#define COLLECT_LAUNCH_H

#include <sys/types.h>

/* Starts argv stopped right after its exec; returns its pid. */
pid_t launch_start(char **argv, int stdout_fd, int stderr_fd);
/* Lets the stopped command run. */
void launch_resume(pid_t pid);
/* The command's exit status once it ended (reaps it), -1 if unknown. */
int launch_reap(pid_t pid);

#endif
