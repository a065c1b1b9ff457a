/*
 * ringdump: seeds for fuzz/perf_ring.c from a real recording.  Opens collect's sampling
 * events on every thread of PID (frame pointers, or DWARF samples with registers and stack
 * copies), waits, and writes the records of each CPU's ring as one seed: the flags byte,
 * the pid and the ring offset the target expects, then the records, cut after MAX bytes.
 *
 * usage: ringdump PID SECONDS fp|dwarf MAX OUTPREFIX   (root; writes OUTPREFIX-cpuN)
 * Not part of the product: sh fuzz/seeds.sh streams runs it.
 */
#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../collect/perf.h"
#include "../../collect/procfs.h"

int
main(int argc, char **argv)
{
	struct perf_set p;
	struct tidlist tl = { 0 };
	char e[300];

	if (argc != 6)
		errx(2, "usage: ringdump PID SECONDS fp|dwarf MAX OUTPREFIX");
	pid_t pid = atoi(argv[1]);
	int dwarf = strcmp(argv[3], "dwarf") == 0;
	size_t max = strtoul(argv[4], NULL, 10);
	if (perf_set_init(&p, 199, dwarf, e, sizeof(e)) < 0)
		errx(1, "%s", e);
	if (procfs_tasks(pid, &tl) < 0)
		err(1, "threads of %d", (int)pid);
	for (size_t i = 0; i < tl.n; i++)
		if (perf_set_add(&p, tl.v[i], e, sizeof(e)) < 0)
			errx(1, "%s", e);
	sleep((unsigned)atoi(argv[2]));
	for (size_t i = 0; i < p.nrings; i++) {
		struct perf_ring *r = &p.rings[i];
		uint64_t head = __atomic_load_n(&r->pg->data_head, __ATOMIC_ACQUIRE);
		uint64_t tail = r->pg->data_tail, end = tail;
		/* whole records only, up to max bytes */
		while (end < head) {
			struct perf_event_header h;
			for (size_t k = 0; k < sizeof(h); k++)
				((uint8_t *)&h)[k] = r->data[(end + k) & (r->size - 1)];
			if (!h.size || (end > tail && end + h.size - tail > max))
				break;
			end += h.size;
		}
		if (end == tail)
			continue;
		char path[4096];
		snprintf(path, sizeof(path), "%s-cpu%d", argv[5], r->cpu);
		FILE *f = fopen(path, "wb");
		if (!f)
			err(1, "%s", path);
		uint8_t flags = dwarf ? 1 : 0;
		uint32_t p32 = (uint32_t)pid, at = (uint32_t)(tail & (r->size - 1));
		fwrite(&flags, 1, 1, f);
		fwrite(&p32, 4, 1, f);
		fwrite(&at, 4, 1, f);
		for (uint64_t k = tail; k < end; k++)
			fputc(r->data[k & (r->size - 1)], f);
		if (fclose(f) != 0)
			err(1, "%s", path);
	}
	perf_set_close(&p);
	tidlist_free(&tl);
	return 0;
}
