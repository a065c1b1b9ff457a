/*
 * heap_floor_driver PID SECONDS [empty|heap] [INTERVAL]: the allocator probes of collect
 * (collect/heap.c) on pid for SECONDS, then the calls the program counted.  "empty" attaches
 * the empty program of bpf/heap.bpf.c to the same uprobes and uretprobes: the trap floor of
 * bench/heap.sh, what any uprobe-based heap profiler pays before doing anything.  "heap"
 * runs the real program and drains its ring like collect, writing the stream to /dev/null.
 */
#include <err.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../collect/heap.h"

int
main(int argc, char **argv)
{
	if (argc < 3)
		errx(2, "usage: heap_floor_driver PID SECONDS [empty|heap] [INTERVAL]");
	pid_t pid = (pid_t)atoi(argv[1]);
	double secs = atof(argv[2]);
	int empty = argc < 4 || strcmp(argv[3], "empty") == 0;
	static struct heap_probe p;
	char why[600];
	if (heapsym_detect(pid, "auto", &p) < 0)
		errx(1, "%s", p.reason);
	struct heap_config cfg = { .interval = argc > 4 ? strtoull(argv[4], NULL, 10) : 524288,
				   .empty = empty };
	struct heap *h = heap_open(pid, &p, &cfg, why, sizeof(why));
	if (!h)
		errx(1, "%s", why);
	static struct emit out;
	int fd = open("/dev/null", O_WRONLY);
	if (fd < 0 || dup2(fd, 1) < 0)
		err(1, "/dev/null");
	struct stream_header hdr = { .version = STREAM_VERSION, .clockid = CLOCK_MONOTONIC,
				     .e_machine = 62 };
	emit_open(&out, &hdr, NULL);
	fprintf(stderr, "attached\n");
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	double t0 = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9, t = t0;
	while (t - t0 < secs) {
		usleep(100000);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		t = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
		heap_drain(h, &out, (uint64_t)(t * 1e9));
	}
	emit_close(&out);
	heap_close(h);
	return 0;
}
