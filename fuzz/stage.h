/*
 * Included by the targets that run a stage's main.c in-process, right before it: the system
 * headers a stage uses come first, so that only the stage's own calls of main and exit are
 * renamed (main is not the program's, exit gives up the input: see fuzz.h).
 */
#ifndef RP_FUZZ_STAGE_H
#define RP_FUZZ_STAGE_H

#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fuzz.h"

#define main stage_main
#define exit(status) fuzz_exit(status)

#endif
