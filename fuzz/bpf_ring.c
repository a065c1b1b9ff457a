/* libFuzzer target: collect's off-CPU drain (offcpu_drain.c: the ring buffer's records of
 * finished intervals, with or without a stack copy; the "starts" map of threads still off
 * the CPU, kept across drains; stacks of the stack-trace map and the user stack table; the
 * loss counters; pieces grouped and written as FR_OFFCPU), with the BPF maps and the ring
 * buffer played by the input.  Every byte of them is written by the BPF program for the
 * target's threads: collect (root) must take none of it on trust.
 *
 * libbpf's map and ring calls are defined here, in place of the library's: the maps are
 * tables filled by the input, the ring hands on the records the input queued.  Input: u8
 * ncpu (1..4), u64 --offcpu-min-duration-us in ns, u64 deadline (0: none), u64 end; then
 * commands, each u8 op, u16 length, payload:
 *   0 kernel stack   s32 id, u64 ips...        (the "stacks" map)
 *   1 user stack     u32 slot, u32 nr, u64 ips... (the "ustacks" table)
 *   2 thread off CPU u32 tid, struct offcpu_start  ("starts")
 *   3 ring record    the bytes of one record
 *   4 drain          u64 round
 *   5 stack copy     u32 tid, struct offcpu_deep   ("deep")
 *   6 counter        u32 counter, u64 per CPU      ("counters")
 *   7 thread back    u32 tid                      (its "starts" entry goes)
 * and the recording ends at end (offcpu_finish).  Frames go to /dev/null. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "../collect/offcpu_priv.h"

enum { FD_STACKS = 1001, FD_USTACKS, FD_STARTS, FD_COUNTERS, FD_DEEP };

#define MAX_ENTRIES 4096
#define MAX_RECORDS 4096

struct entry {
	int fd;
	uint32_t key;
	size_t len;
	uint8_t *val;
};
static struct entry entries[MAX_ENTRIES];
static size_t nentries;

struct record {
	size_t len;
	uint64_t *p;            /* 8-byte aligned, as the ring's records are */
};
static struct record records[MAX_RECORDS];
static size_t nrecords;

static struct offcpu o;
static struct emit out;

static struct entry *
find(int fd, uint32_t key)
{
	for (size_t i = 0; i < nentries; i++)
		if (entries[i].fd == fd && entries[i].key == key)
			return &entries[i];
	return NULL;
}

/* Stores value (cut or zero-filled to len) under key. */
static void
put(int fd, uint32_t key, const uint8_t *v, size_t n, size_t len)
{
	struct entry *e = find(fd, key);
	if (!e) {
		if (nentries == MAX_ENTRIES)
			return;
		e = &entries[nentries++];
		*e = (struct entry){ .fd = fd, .key = key, .len = len, .val = calloc(1, len) };
		if (!e->val)
			abort();
	}
	memset(e->val, 0, len);
	memcpy(e->val, v, n < len ? n : len);
}

int
bpf_map_lookup_elem(int fd, const void *key, void *value)
{
	uint32_t k;
	memcpy(&k, key, 4);
	struct entry *e = find(fd, k);
	if (!e) {
		errno = ENOENT;
		return -ENOENT;
	}
	memcpy(value, e->val, e->len);
	return 0;
}

/* Keys in the order they were stored, as a hash map walk gives them in some order. */
int
bpf_map_get_next_key(int fd, const void *key, void *next_key)
{
	size_t i = 0;
	if (key) {
		uint32_t k;
		memcpy(&k, key, 4);
		while (i < nentries && !(entries[i].fd == fd && entries[i].key == k))
			i++;
		i = i < nentries ? i + 1 : 0; /* a key that went: start again */
	}
	for (; i < nentries; i++)
		if (entries[i].fd == fd) {
			memcpy(next_key, &entries[i].key, 4);
			return 0;
		}
	errno = ENOENT;
	return -ENOENT;
}

int
ring_buffer__consume(struct ring_buffer *rb)
{
	(void)rb;
	size_t n = nrecords;
	for (size_t i = 0; i < n; i++) {
		offcpu_ring_event(&o, records[i].p, records[i].len);
		free(records[i].p);
	}
	nrecords = 0;
	return (int)n;
}

/* The kernel stacks start with the program's own frames: here, addresses below 0x1000. */
static size_t
own_frames(void *arg, const uint64_t *ips, size_t n)
{
	(void)arg;
	size_t i = 0;
	while (i < n && ips[i] < 0x1000)
		i++;
	return i;
}

static void
before(void *arg, uint32_t pid, const uint64_t *kips, size_t n)
{
	(void)arg, (void)pid, (void)kips, (void)n;
}

static uint64_t
u64_at(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static const uint8_t *script;
static size_t script_len;
static uint64_t end_at;

static void
run(void)
{
	size_t at = 0;
	while (at + 3 <= script_len) {
		uint8_t op = script[at];
		size_t n = (size_t)script[at + 1] | (size_t)script[at + 2] << 8;
		at += 3;
		if (n > script_len - at)
			n = script_len - at;
		const uint8_t *p = script + at;
		at += n;
		uint32_t k = 0;
		if (n >= 4)
			memcpy(&k, p, 4);
		switch (op % 8) {
		case 0:
			if (n >= 4)
				put(FD_STACKS, k, p + 4, n - 4, OFFCPU_MAX_DEPTH * 8);
			break;
		case 1:
			if (n >= 4) {
				struct offcpu_ustack u = { 0 };
				memcpy((uint8_t *)&u + 8, p + 4,
				       n - 4 < sizeof(u) - 8 ? n - 4 : sizeof(u) - 8);
				put(FD_USTACKS, k, (const uint8_t *)&u, sizeof(u), sizeof(u));
			}
			break;
		case 2:
			if (n >= 4)
				put(FD_STARTS, k, p + 4, n - 4, sizeof(struct offcpu_start));
			break;
		case 3:
			if (nrecords < MAX_RECORDS) {
				uint64_t *r = calloc(1, n / 8 * 8 + 8);
				if (!r)
					abort();
				memcpy(r, p, n);
				records[nrecords++] = (struct record){ n, r };
			}
			break;
		case 4:
			if (n >= 8) {
				uint64_t round = u64_at(p);
				offcpu_drain(&o, &out, &round);
			}
			break;
		case 5:
			if (n >= 4)
				put(FD_DEEP, k, p + 4, n - 4, sizeof(struct offcpu_deep));
			break;
		case 6:
			if (n >= 4)
				put(FD_COUNTERS, k, p + 4, n - 4, 8 * (size_t)o.ncpu);
			break;
		case 7:
			for (size_t i = 0; n >= 4 && i < nentries; i++)
				if (entries[i].fd == FD_STARTS && entries[i].key == k) {
					free(entries[i].val);
					entries[i] = entries[--nentries];
					break;
				}
			break;
		}
	}
	offcpu_finish(&o, &out, end_at);
	emit_flush(&out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct stream_header hdr = { .version = STREAM_VERSION, .clockid = 1 };

	if (size < 25)
		return 0;
	memset(&o, 0, sizeof(o));
	o.ncpu = data[0] % 4 + 1;
	o.min_ns = u64_at(data + 1);
	o.deadline_ns = u64_at(data + 9);
	end_at = u64_at(data + 17);
	o.starts_fd = FD_STARTS;
	o.stacks_fd = FD_STACKS;
	o.ustacks_fd = FD_USTACKS;
	o.counters_fd = FD_COUNTERS;
	o.deep_fd = FD_DEEP;
	o.own_frames = own_frames;
	o.before = before;
	o.rb = (struct ring_buffer *)&o; /* only ever handed to ring_buffer__consume above */
	memset(&out, 0, sizeof(out));
	out.n = 1;
	if (stream_writer_open(&out.w[0], fuzz_null_fd(), "stdout", &hdr) < 0)
		abort();
	script = data + 25;
	script_len = size - 25;
	FUZZ_TRY(run());
	stream_writer_release(&out.w[0]);
	for (size_t i = 0; i < OFFCPU_STACK_SLOTS + OFFCPU_USTACK_SLOTS; i++)
		free(o.stacks[i]);
	batch_release(&o.batches);
	free(o.open[0].slots);
	free(o.open[1].slots);
	for (size_t i = 0; i < nentries; i++)
		free(entries[i].val);
	nentries = 0;
	for (size_t i = 0; i < nrecords; i++)
		free(records[i].p);
	nrecords = 0;
	return 0;
}
