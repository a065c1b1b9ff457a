/* aggregate/forget.c: an exit is forgotten only after a round covered it and the window
 * open at that round has ended, thread first and then, for the last thread, the process. */
#include "../../aggregate/forget.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stream.h"

#include "check.h"

struct out {
	char path[64];
	int fd;
	struct stream_writer w;
};

static void
out_open(struct out *o)
{
	static const struct stream_header h = { 1, 1, 0, 42, 62 };
	snprintf(o->path, sizeof(o->path), "/tmp/forget_test.XXXXXX");
	o->fd = mkstemp(o->path);
	if (o->fd < 0 || stream_writer_open(&o->w, o->fd, "t", &h) < 0)
		abort();
	unlink(o->path);
}

/* The FR_FORGET frames written so far, as "pid/tid " pairs; the file is emptied. */
static const char *
forgotten(struct out *o)
{
	static char text[256];
	static const struct stream_header h0;
	struct stream_header h = h0;
	struct stream_reader r;
	struct frame f;
	size_t n = 0;

	text[0] = 0;
	stream_flush(&o->w);
	int fd = dup(o->fd);
	lseek(fd, 0, SEEK_SET);
	if (stream_reader_open(&r, fd, "t", &h) < 0)
		abort();
	while (stream_read(&r, &f) > 0) {
		struct fr_forget g;
		char e[200];
		if (f.type != FR_FORGET || stream_get_forget(&f, &g, e, sizeof(e)) < 0)
			abort();
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%u/%u ", g.pid, g.tid);
	}
	stream_reader_release(&r);
	close(fd);
	/* Start over with only the header. */
	if (ftruncate(o->fd, 48) < 0 || lseek(o->fd, 48, SEEK_SET) < 0)
		abort();
	return text;
}

static void
test_timing(void)
{
	struct forget_q q = { 0 };
	struct out o;
	out_open(&o);
	struct fr_task thread = { .time = 100, .pid = 7, .tid = 8 };
	struct fr_task last = { .time = 150, .pid = 7, .tid = 7, .flags = EXIT_PROCESS };
	struct fr_task later = { .time = 300, .pid = 9, .tid = 9, .flags = EXIT_PROCESS };
	CHECK(forget_push(&q, &thread) == 0 && forget_push(&q, &last) == 0 &&
	      forget_push(&q, &later) == 0);
	/* A round before the exits: nothing; the round covering them arms them with the
	 * window then open (2); while that window is open, still nothing. */
	CHECK(forget_round(&q, 90, 2, &o.w) == 0);
	CHECK(forget_round(&q, 200, 2, &o.w) == 0);
	CHECK(forget_round(&q, 250, 2, &o.w) == 0);
	CHECK(strcmp(forgotten(&o), "") == 0);
	/* Window 2 ended: the thread, then the process (the main thread's name goes with
	 * it); pid 9's exit came after that round's time and is armed with window 3 now. */
	CHECK(forget_round(&q, 350, 3, &o.w) == 0);
	CHECK(strcmp(forgotten(&o), "7/8 7/0 ") == 0);
	CHECK(q.n == 1);
	CHECK(forget_round(&q, 400, 3, &o.w) == 0);
	CHECK(strcmp(forgotten(&o), "") == 0);
	CHECK(forget_round(&q, 500, 5, &o.w) == 0);
	CHECK(strcmp(forgotten(&o), "9/0 ") == 0 && q.n == 0);
	/* A main thread that ends before the others keeps the process's name. */
	struct fr_task leader = { .time = 600, .pid = 11, .tid = 11 };
	CHECK(forget_push(&q, &leader) == 0);
	CHECK(forget_round(&q, 700, 6, &o.w) == 0 && forget_round(&q, 800, 7, &o.w) == 0);
	CHECK(strcmp(forgotten(&o), "") == 0 && q.n == 0);
	/* pid 0 (the idle task) is never forgotten. */
	struct fr_task idle = { .time = 1, .flags = EXIT_PROCESS };
	CHECK(forget_push(&q, &idle) == 0 && q.n == 0);
	forget_release(&q);
	stream_writer_release(&o.w);
	close(o.fd);
}

int
main(void)
{
	test_timing();
	printf("forget: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
