/* libFuzzer target: collect's perf ring reader (perf.c: record sizes, records that wrap the
 * end of the ring) and record parser (records.c: samples with callchains, DWARF samples with
 * registers and stack copies, mmap2, comm, fork/exit, lost and throttle records, into
 * frames), on a ring buffer whose contents are the input.  collect runs as root and every
 * byte of the ring is written for the target's threads, partly from its memory.
 *
 * Input: u8 flags (1 DWARF samples, 2 off-CPU alone: no CPU samples, 4 auto mode's
 * frame-pointer watch armed, 8 a deadline), u32 target pid, u32 ring offset of the first
 * record, then the ring's contents from there on (wrapping at the end of a ring of the
 * next power of two).  Frames go to /dev/null. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "../collect/collect.h"

static struct collect c;
static struct ksyms ks; /* kernel symbols for the samples' kernel frames */

/* 256 symbols of 4 KiB from the kernel's usual text address, as ksyms_load makes them. */
static void
load_ksyms(void)
{
	char path[64];
	snprintf(path, sizeof(path), "/tmp/fuzz-perf-ring.%d", (int)getpid());
	FILE *f = fopen(path, "w");
	if (!f)
		abort();
	for (int i = 0; i < 256; i++)
		fprintf(f, "%llx T sym_%d%s\n", 0xffffffff81000000ull + 4096ull * i, i,
			i % 16 ? "" : "\t[mod]");
	fclose(f);
	if (ksyms_load(&ks, path) < 0)
		abort();
	unlink(path);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct perf_event_mmap_page page;
	static struct stream_header hdr = { .version = STREAM_VERSION, .clockid = 1 };
	static uint8_t *ring;
	static uint8_t *scratch;
	const size_t max = 1 << 20;

	if (size < 9 || size - 9 > max)
		return 0;
	if (!ring && (!(ring = malloc(max)) || !(scratch = malloc(1 << 16))))
		abort();
	uint8_t flags = data[0];
	uint32_t pid, at;
	memcpy(&pid, data + 1, 4);
	memcpy(&at, data + 5, 4);
	at &= ~7u; /* the kernel's records start 8-byte aligned */
	data += 9, size -= 9;
	uint64_t rsize = 64;
	while (rsize < size)
		rsize *= 2;
	for (size_t i = 0; i < size; i++)
		ring[(at + i) & (rsize - 1)] = data[i];

	if (!ks.tab.n)
		load_ksyms();
	for (size_t i = 0; i < ks.tab.n; i++)
		ks.tab.v[i].sent = 0;
	memset(&c, 0, sizeof(c));
	c.ksyms = ks;
	c.o.pid = (pid_t)pid;
	c.o.unwind = flags & 4 ? "auto" : "fp";
	c.o.no_cpu = !!(flags & 2);
	scope_init(&c.scope, c.o.pid);
	c.unwind.mode = flags & 1 ? "dwarf" : "fp";
	c.unwind.calib.verdict = "accepted";
	c.perf.dwarf = flags & 1;
	c.perf.scratch = scratch;
	if (flags & 8)
		c.run.deadline_ns = 1ull << 40;
	c.out.n = 1;
	if (stream_writer_open(&c.out.w[0], fuzz_null_fd(), "stdout", &hdr) < 0)
		abort();
	fallback_init(&c.fb, c.o.pid, 1000000000ull, 0);
	fallback_arm(&c.fb, c.o.unwind, &c.unwind, 0);
	struct perf_ring r = { .pg = &page, .data = ring, .size = rsize };
	page.data_tail = at;
	page.data_head = (uint64_t)at + size;
	FUZZ_TRY(perf_ring_read(&c.perf, &r, records_handle, &c, 1));
	if (page.data_tail != page.data_head)
		abort(); /* the ring is always given back whole */
	stream_writer_release(&c.out.w[0]);
	fallback_free(&c.fb);
	names_free(&c.names);
	stacktop_free(&c.rec.top);
	return 0;
}
