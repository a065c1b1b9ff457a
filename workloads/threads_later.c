/*
 * threads_later [SECONDS]: starts single-threaded, busy in early_spin; after one second it
 * creates a second busy thread named "rp-late" (late_spin), so a recorder attached at start
 * must pick up a thread that did not exist when it attached.  Both run until SECONDS.
 *
 * Stacks (leaf first): early_spin <- main; late_spin <- late_thread <- start_thread.
 */
#include <pthread.h>
#include <string.h>

#include "common.h"

#define CHUNK 100000		/* arithmetic between clock reads */
#define LATE_NS 1000000000u	/* one second before the second thread starts */

volatile uint64_t sink;

/* Both spins read the clock after each chunk: not leaves, so they keep frame pointers. */
WL_KEEP int early_spin(uint64_t until)
{
	uint64_t x = sink;

	for (int i = 0; i < CHUNK; i++)
		x = x * 6364136223846793005u + 1442695040888963407u;
	sink = x;
	return wl_expired(until);
}

WL_KEEP int late_spin(uint64_t until)
{
	uint64_t x = sink;

	for (int i = 0; i < CHUNK; i++)
		x = x * 2862933555777941757u + 3037000493u;
	sink = x;
	return wl_expired(until);
}

WL_KEEP void *late_thread(void *p)
{
	uint64_t deadline = *(uint64_t *)p;

	pthread_setname_np(pthread_self(), "rp-late");
	while (!late_spin(deadline))
		;
	return NULL;
}

int main(int argc, char **argv)
{
	uint64_t deadline = wl_deadline(argc, argv);
	uint64_t late = wl_clock_ns(CLOCK_MONOTONIC) + LATE_NS;
	pthread_t t;
	int e;

	if (deadline != 0 && deadline < late)
		late = deadline;
	while (!early_spin(late))
		;
	if (wl_expired(deadline))
		return 0;
	if ((e = pthread_create(&t, NULL, late_thread, &deadline)) != 0)
		errx(1, "cannot create the late thread: %s", strerror(e));
	while (!early_spin(deadline))
		;
	pthread_join(t, NULL);
	return 0;
}
