/*
 * churngen N: writes a collect stream of N short-lived processes on stdout, for the churn
 * tests.  Every 2 ms a process forks from pid 1, maps /churn/pNNN (a file that does not
 * exist, so its frames stay "[pNNN]"), is sampled twice and exits (EXIT_PROCESS); pids run
 * from 1000 up and wrap after 500, so every pid is taken again, by a new process with a
 * file of its own, a few windows after the one before it ended.  Rounds every 10 ms; the
 * stream ends 50 ms after the last exit.
 *
 *   churngen 4000 | unwind | aggregate --window 100ms | emit-collapsed --output DIR | ...
 *
 * Built by tests/churn.bats against librp.a.
 */
#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream.h"

#define MS 1000000ull
#define PIDS 500

static struct stream_writer w;

static void
check(int rc)
{
	if (rc < 0)
		errx(1, "%s", w.err);
}

static struct str
S(const char *s)
{
	return (struct str){ s, (uint16_t)strlen(s) };
}

int
main(int argc, char **argv)
{
	if (argc != 2)
		errx(2, "usage: churngen N");
	long n = strtol(argv[1], NULL, 10);
	struct stream_header h = { 1, 1, 0, 0x00c0ffee12345678ull, 62 };
	if (n < 1 || stream_writer_open(&w, 1, "stdout", &h) < 0)
		errx(1, "cannot start the stream");
	struct fr_target t = { .pid = 1, .cpu_frequency = 999, .start_time = 0,
			       .kind = S("launch"), .exe = S("/bin/sh"), .comm = S("sh"),
			       .unwind_requested = S("fp"), .unwind_mode = S("fp"),
			       .profiles = S("cpu") };
	check(stream_put_target(&w, &t));
	uint64_t next_round = 10 * MS, now = 0;
	for (long i = 0; i < n; i++) {
		uint32_t pid = 1000 + (uint32_t)(i % PIDS);
		uint64_t t0 = 1 * MS + (uint64_t)i * 2 * MS;
		char path[64], comm[16];
		while (next_round <= t0) {
			struct fr_round r = { next_round };
			check(stream_put_round(&w, &r));
			next_round += 10 * MS;
		}
		snprintf(path, sizeof(path), "/churn/p%ld", i);
		snprintf(comm, sizeof(comm), "p%ld", i);
		struct fr_task fk = { .time = t0, .pid = pid, .ppid = 1, .tid = pid, .ptid = 1 };
		check(stream_put_task(&w, FR_FORK, &fk));
		/* An exec: the new image's name, then its mappings. */
		struct fr_comm c = { .time = t0, .pid = pid, .tid = pid, .flags = COMM_EXEC,
				     .comm = S(comm) };
		check(stream_put_comm(&w, &c));
		struct fr_mmap m = { .time = t0, .pid = pid, .tid = pid, .start = 0x400000,
				     .len = 0x10000, .prot = 5, .build_id_len = 0, .path = S(path) };
		check(stream_put_mmap(&w, &m));
		for (int k = 0; k < 2; k++) {
			static struct fr_sample s;
			s = (struct fr_sample){ .time = t0 + (uint64_t)(k + 1) * 500000, .pid = pid,
						.tid = pid, .period = 1000000, .nuser = 1 };
			s.ips[0] = 0x401000 + (uint64_t)k * 16;
			check(stream_put_sample(&w, &s));
		}
		struct fr_task ex = fk;
		ex.time = t0 + 1500000;
		ex.flags = EXIT_PROCESS;
		check(stream_put_task(&w, FR_EXIT, &ex));
		now = ex.time;
	}
	struct fr_round r = { now + 10 * MS };
	check(stream_put_round(&w, &r));
	struct fr_end e = { now + 50 * MS, END_TARGET_EXIT };
	check(stream_put_end(&w, &e));
	check(stream_flush(&w));
	stream_writer_release(&w);
	return 0;
}
