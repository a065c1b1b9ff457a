/*
 * busy2 [SECONDS]: two threads, "rp-busy-1" and "rp-busy-2", each keeping one CPU busy;
 * the cost benchmark records it at a high rate to load the recorder.
 *
 * Stacks (leaf first): busy_spin <- busy_thread <- start_thread.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "common.h"

#define CHUNK 100000		/* arithmetic between clock reads */

volatile uint64_t sink;

struct busy_arg {
	uint64_t deadline;
	int index;
};

/* Reads the clock after each chunk: not a leaf, so it keeps its frame pointer. */
WL_KEEP int busy_spin(uint64_t deadline)
{
	uint64_t x = sink;

	for (int i = 0; i < CHUNK; i++)
		x = x * 6364136223846793005u + 1442695040888963407u;
	sink = x;
	return wl_expired(deadline);
}

WL_KEEP void *busy_thread(void *p)
{
	struct busy_arg *a = p;
	char name[16];

	snprintf(name, sizeof(name), "rp-busy-%d", a->index);
	pthread_setname_np(pthread_self(), name);
	while (!busy_spin(a->deadline))
		;
	return NULL;
}

int main(int argc, char **argv)
{
	uint64_t deadline = wl_deadline(argc, argv);
	struct busy_arg a[2] = { { deadline, 1 }, { deadline, 2 } };
	pthread_t t[2];
	int e;

	for (int i = 0; i < 2; i++)
		if ((e = pthread_create(&t[i], NULL, busy_thread, &a[i])) != 0)
			errx(1, "cannot create thread %d: %s", i + 1, strerror(e));
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return 0;
}
