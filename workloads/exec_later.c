/*
 * exec_later SECONDS PROGRAM [ARGS...]: spins in before_exec for SECONDS, then executes
 * PROGRAM in the same process, so a recording sees one image replaced by another.
 */
#include <stdint.h>
#include <unistd.h>

#include "common.h"

volatile uint64_t sink;

WL_KEEP void before_exec(uint64_t deadline)
{
	uint64_t x = sink;

	while (!wl_expired(deadline)) {
		for (int i = 0; i < 100000; i++)
			x = x * 2862933555777941757u + 3037000493u;
		sink = x;
	}
}

int main(int argc, char **argv)
{
	if (argc < 3)
		errx(2, "usage: exec_later SECONDS PROGRAM [ARGS...]");
	before_exec(wl_deadline(2, argv));
	execv(argv[2], argv + 2);
	err(1, "cannot execute '%s'", argv[2]);
}
