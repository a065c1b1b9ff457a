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

/* The FR_FORGET frames written so far, as "pid/tid " pairs ("pid/tid:id,id " with
 * mappings); the file is emptied. */
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
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%u/%u%s", g.pid, g.tid,
				      g.n ? ":" : " ");
		for (uint32_t i = 0; i < g.n; i++)
			n += (size_t)snprintf(text + n, sizeof(text) - n, "%u%s",
					      stream_forget_id(&g, i), i + 1 < g.n ? "," : " ");
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
	CHECK(forget_exit(&q, &thread) == 0 && forget_exit(&q, &last) == 0 &&
	      forget_exit(&q, &later) == 0);
	/* A round before the exits: nothing; the round covering them arms them with the
	 * window then open (2); while that window is open, still nothing. */
	CHECK(forget_round(&q, 90, 2, NULL, &o.w) == 0);
	CHECK(forget_round(&q, 200, 2, NULL, &o.w) == 0);
	CHECK(forget_round(&q, 250, 2, NULL, &o.w) == 0);
	CHECK(strcmp(forgotten(&o), "") == 0);
	/* Window 2 ended: the thread, then the process (the main thread's name goes with
	 * it); pid 9's exit came after that round's time and is armed with window 3 now. */
	CHECK(forget_round(&q, 350, 3, NULL, &o.w) == 0);
	CHECK(strcmp(forgotten(&o), "7/8 7/0 ") == 0);
	CHECK(q.n == 1);
	CHECK(forget_round(&q, 400, 3, NULL, &o.w) == 0);
	CHECK(strcmp(forgotten(&o), "") == 0);
	CHECK(forget_round(&q, 500, 5, NULL, &o.w) == 0);
	CHECK(strcmp(forgotten(&o), "9/0 ") == 0 && q.n == 0);
	/* A main thread that ends before the others keeps the process's name. */
	struct fr_task leader = { .time = 600, .pid = 11, .tid = 11 };
	CHECK(forget_exit(&q, &leader) == 0);
	CHECK(forget_round(&q, 700, 6, NULL, &o.w) == 0 && forget_round(&q, 800, 7, NULL, &o.w) == 0);
	CHECK(strcmp(forgotten(&o), "") == 0 && q.n == 0);
	/* pid 0 (the idle task) is never forgotten. */
	struct fr_task idle = { .time = 1, .flags = EXIT_PROCESS };
	CHECK(forget_exit(&q, &idle) == 0 && q.n == 0);
	forget_release(&q);
	stream_writer_release(&o.w);
	close(o.fd);
}

/* unwind's list waits for the end of the window open at the next round; a name whose
 * thread or process id came back after the exit stays. */
static void
test_lists_and_reuse(void)
{
	struct forget_q q = { 0 };
	struct out o;
	out_open(&o);
	uint8_t ids[8] = { 5, 0, 0, 0, 6, 0, 0, 0 };
	struct fr_forget list = { 0, 0, 2, ids };
	CHECK(forget_frame(&q, &list) == 0);
	struct fr_task a = { .time = 100, .pid = 20, .tid = 21 };
	struct fr_task b = { .time = 100, .pid = 30, .tid = 30, .flags = EXIT_PROCESS };
	struct fr_task c = { .time = 100, .pid = 40, .tid = 40, .flags = EXIT_PROCESS };
	CHECK(forget_exit(&q, &a) == 0 && forget_exit(&q, &b) == 0 && forget_exit(&q, &c) == 0);
	/* Thread 21 and process 30 come back after their exits; process 40 was seen again
	 * only before it ended. */
	forget_reused(&q, 22, 21, 150);
	forget_reused(&q, 30, 31, 160);
	forget_reused(&q, 40, 40, 90);
	CHECK(forget_round(&q, 200, 4, NULL, &o.w) == 0);
	CHECK(strcmp(forgotten(&o), "") == 0);
	CHECK(forget_round(&q, 300, 5, NULL, &o.w) == 0);
	CHECK(strcmp(forgotten(&o), "0/0:5,6 40/0 ") == 0 && q.n == 0);
	forget_release(&q);
	stream_writer_release(&o.w);
	close(o.fd);
}

static int ngone;
static uint32_t gone_ids[8];

static int
note_gone(void *arg, uint32_t id)
{
	(void)arg;
	if (ngone < 8)
		gone_ids[ngone++] = id;
	return 0;
}

/* Mapping ids that memory in use names wait, the others go (and are told); a name in the
 * same item goes with the first of them, once. */
static void
test_hold(void)
{
	struct forget_q q = { 0 };
	struct idmap named;
	struct out o;
	out_open(&o);
	idmap_init(&named);
	CHECK(idmap_put(&named, 6, 1) == 0 && idmap_put(&named, 8, 1) == 0);
	struct forget_hold hold = { &named, note_gone, NULL };
	uint8_t ids[16] = { 5, 0, 0, 0, 6, 0, 0, 0, 7, 0, 0, 0, 8, 0, 0, 0 };
	struct fr_forget list = { 50, 51, 4, ids };
	CHECK(forget_frame(&q, &list) == 0);
	CHECK(!forget_due(&q, 4));
	CHECK(forget_round(&q, 200, 4, &hold, &o.w) == 0);
	CHECK(!forget_due(&q, 4) && forget_due(&q, 5));
	CHECK(forget_round(&q, 300, 5, &hold, &o.w) == 0);
	CHECK(strcmp(forgotten(&o), "50/51:5,7 ") == 0 && q.n == 1);
	CHECK(ngone == 2 && gone_ids[0] == 5 && gone_ids[1] == 7);
	/* Still named: nothing; then 8's blocks are freed. */
	CHECK(forget_round(&q, 400, 6, &hold, &o.w) == 0);
	CHECK(strcmp(forgotten(&o), "") == 0 && q.n == 1 && forget_due(&q, 6));
	idmap_clear(&named);
	CHECK(idmap_put(&named, 6, 1) == 0);
	CHECK(forget_round(&q, 500, 6, &hold, &o.w) == 0);
	CHECK(strcmp(forgotten(&o), "0/0:8 ") == 0 && q.n == 1);
	/* Without a hold everything due goes. */
	CHECK(forget_round(&q, 600, 7, NULL, &o.w) == 0);
	CHECK(strcmp(forgotten(&o), "0/0:6 ") == 0 && q.n == 0 && ngone == 3);
	idmap_release(&named);
	forget_release(&q);
	stream_writer_release(&o.w);
	close(o.fd);
}

int
main(void)
{
	test_timing();
	test_lists_and_reuse();
	test_hold();
	printf("forget: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
