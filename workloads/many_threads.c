/*
 * many_threads [SECONDS [N]]: N threads in all (default 1100), the main one and N - 1 that
 * only wait, so the process has more threads than the preflight's limit of 1024 for as long
 * as it runs.  Each waiting thread has a small stack, so a thousand cost little memory.
 */
#include <limits.h>
#include <pthread.h>
#include <unistd.h>

#include "common.h"

#define STACK (64 * 1024)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;

static void *waiter(void *p)
{
	(void)p;
	pthread_mutex_lock(&lock);
	for (;;)
		pthread_cond_wait(&never, &lock);
	return NULL;
}

int main(int argc, char **argv)
{
	uint64_t deadline = wl_deadline(argc, argv);
	long n = argc > 2 ? strtol(argv[2], NULL, 10) : 1100;
	pthread_attr_t attr;
	pthread_t t;

	if (n < 1 || n > 100000)
		errx(2, "bad thread count '%s'", argv[2]);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, STACK > PTHREAD_STACK_MIN ? STACK : PTHREAD_STACK_MIN);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (long i = 1; i < n; i++)
		if (pthread_create(&t, &attr, waiter, NULL) != 0)
			errx(1, "cannot create thread %ld", i);
	while (!wl_expired(deadline))
		usleep(100000);
	return 0;
}
