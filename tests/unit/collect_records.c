/*
 * collect's ring reader and record parser without a kernel: records written into a fake
 * ring (one crossing its end), a sample split at the context markers, children dropped and
 * short records counted as malformed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../collect/collect.h"

#include "check.h"

#define RING 256

static struct perf_event_mmap_page page;
static uint8_t ring_data[RING];

/* Appends a record at head, wrapping at the end of the data area as the kernel does. */
static void
ring_put(const void *rec, size_t len)
{
	for (size_t i = 0; i < len; i++)
		ring_data[(page.data_head + i) % RING] = ((const uint8_t *)rec)[i];
	page.data_head += len;
}

struct seen {
	int n;
	uint16_t sizes[16];
	uint64_t last_word[16];
};

static void
on_record(void *arg, const struct perf_event_header *h)
{
	struct seen *s = arg;
	s->sizes[s->n] = h->size;
	memcpy(&s->last_word[s->n], (const uint8_t *)h + h->size - 8, 8);
	s->n++;
}

static void
test_wrap(void)
{
	struct perf_set p = { .scratch = malloc(65536) };
	struct perf_ring r = { .pg = &page, .data = ring_data, .size = RING };
	union { struct perf_event_header h; uint64_t w[6]; } rec;
	page.data_head = page.data_tail = 200;  /* the second record crosses offset 256 */
	for (int i = 0; i < 3; i++) {
		memset(&rec, 0, sizeof(rec));
		rec.h.type = 99;
		rec.h.size = 48;
		rec.w[5] = 0x1111 * (uint64_t)(i + 1);
		ring_put(&rec, 48);
	}
	struct seen s = { 0 };
	perf_ring_read(&p, &r, on_record, &s, 0);
	CHECK(s.n == 3 && page.data_tail == 200);
	CHECK(s.last_word[1] == 0x2222 && s.last_word[2] == 0x3333);
	s.n = 0;
	perf_ring_read(&p, &r, on_record, &s, 1);
	CHECK(s.n == 3 && page.data_tail == page.data_head);
	/* A size that is not a multiple of 8 poisons the rest of the ring. */
	rec.h.size = 12;
	ring_put(&rec, 16);
	s.n = 0;
	perf_ring_read(&p, &r, on_record, &s, 1);
	CHECK(s.n == 0 && p.malformed == 1 && page.data_tail == page.data_head);
	free(p.scratch);
}

static struct collect c;

static void
put_sample(uint32_t pid, const uint64_t *chain, uint64_t nr)
{
	union { struct perf_event_header h; uint64_t rec[64]; } u = { 0 };
	uint64_t *rec = u.rec;
	u.h.type = PERF_RECORD_SAMPLE;
	u.h.misc = PERF_RECORD_MISC_USER;
	u.h.size = (uint16_t)(56 + 8 * nr);
	rec[1] = 0x401000;                          /* ip */
	rec[2] = pid | (uint64_t)(pid + 1) << 32;   /* pid, tid */
	rec[3] = 12345;                             /* time */
	rec[4] = 1;                                 /* cpu */
	rec[5] = 20408163;                          /* period */
	rec[6] = nr;
	memcpy(&rec[7], chain, nr * 8);
	records_handle(&c, &u.h);
}

static void
test_records(void)
{
	char path[] = "/tmp/collect_records_XXXXXX";
	int fd = mkstemp(path);
	struct stream_header hd = { .version = 1, .clockid = 1 };
	unlink(path);
	c.o.pid = 100;
	scope_init(&c.scope, 100);
	c.out.n = 1;
	CHECK(stream_writer_open(&c.out.w[0], fd, "tmp", &hd) == 0);
	uint64_t chain[] = { (uint64_t)PERF_CONTEXT_KERNEL, 0xffffffff81000010, 0xffffffff81000020,
			     (uint64_t)PERF_CONTEXT_USER, 0x401000, 0x401100, 0x401200 };
	put_sample(100, chain, 7);
	put_sample(200, chain, 7);                  /* a child process: dropped */
	struct perf_event_header shortrec = { PERF_RECORD_SAMPLE, 0, 16 };
	records_handle(&c, &shortrec);
	CHECK(c.rec.dropped == 1 && c.rec.malformed == 1 && c.rec.samples == 1);
	CHECK(stream_flush(&c.out.w[0]) == 0);

	lseek(fd, 0, SEEK_SET);
	struct stream_reader rd;
	struct stream_header h2;
	struct frame f;
	static struct fr_sample s;
	char err[200];
	CHECK(stream_reader_open(&rd, fd, "tmp", &h2) == 0);
	CHECK(stream_read(&rd, &f) == 1 && f.type == FR_SAMPLE);
	CHECK(stream_get_sample(&f, &s, err, sizeof(err)) == 0);
	CHECK(s.pid == 100 && s.tid == 101 && s.time == 12345 && s.cpu == 1);
	CHECK(s.nkernel == 2 && s.nuser == 3);
	CHECK(s.ips[0] == 0xffffffff81000010 && s.ips[2] == 0x401000 && s.ips[4] == 0x401200);
	CHECK(stream_read(&rd, &f) == 0);
	stream_reader_release(&rd);
	stream_writer_release(&c.out.w[0]);
	close(fd);
}

int
main(void)
{
	test_wrap();
	test_records();
	printf("collect_records: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
