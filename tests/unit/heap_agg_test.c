/* aggregate's heap side: the arithmetic of weighted allocations and in-use since attach.
 * A free takes out exactly what its block put in, so in-use never goes below zero: frees
 * and moves of blocks never sampled (or freed twice, or forgotten by a reset) change
 * nothing; a realloc chain moves its block and keeps its stack; --max-stacks leaves a new
 * stack out of a window while its blocks are still tracked.  Each window is read back from
 * the stream it was written to, as emit-pprof reads it. */
#include "../../aggregate/heap.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frametab.h"
#include "stream.h"

#include "check.h"

#define PID 7

static struct stream_writer enc;        /* encodes the input frames */

struct stack_out {
	uint32_t leaf;
	uint64_t v[4];                  /* alloc_objects, alloc_space, inuse_* */
};
static struct stack_out outs[16];
static int nouts;
static uint64_t stat_v[STREAM_MAX_STATS];
static char stat_k[STREAM_MAX_STATS][64];
static int nstats;

static void
feed(struct heap_agg *h, uint32_t type, const void *v)
{
	uint32_t len;
	const uint8_t *p = stream_frame_encode(&enc, type, v, &len);
	char err[200];
	CHECK(p != NULL);
	struct frame f = { type, len, p };
	CHECK(heap_agg_frame(h, &f, err, sizeof(err)) == 0);
}

static void
alloc(struct heap_agg *h, uint32_t leaf, uint64_t addr, uint64_t size, uint64_t weight,
      uint32_t flags)
{
	static struct fr_heap_stack s;
	memset(&s, 0, sizeof(s));
	s = (struct fr_heap_stack){ .time = 1, .pid = PID, .tid = PID, .addr = addr, .size = size,
				    .weight = weight, .flags = flags, .stack_flags = STACK_USABLE,
				    .nlocs = 2 };
	s.locs[0] = leaf;
	s.locs[1] = 99;
	feed(h, FR_HEAP_STACK, &s);
}

static void
release(struct heap_agg *h, uint64_t addr, uint64_t to)
{
	struct fr_heap_free f = { 2, PID, PID, addr, to };
	feed(h, FR_HEAP_FREE, &f);
}

/* Writes the window and reads back its stacks and statistics; then the next one opens. */
static void
close_window(struct heap_agg *h, uint32_t index)
{
	char path[] = "/tmp/heap_agg_testXXXXXX";
	int fd = mkstemp(path);
	struct stream_writer w;
	struct stream_header hdr = { .version = STREAM_VERSION, .clockid = 1, .e_machine = 62 };
	CHECK(fd >= 0 && stream_writer_open(&w, fd, "out", &hdr) == 0);
	CHECK(heap_agg_put(h, &w, index, 0) == 0);
	static struct fr_window_end we;
	memset(&we, 0, sizeof(we));
	we.nstats = heap_agg_stats(h, we.stats, STREAM_MAX_STATS);
	CHECK(stream_put_window_end(&w, &we) == 0 && stream_flush(&w) == 0);
	CHECK(heap_agg_next(h) == 0);
	heap_agg_window(h, index + 1);
	stream_writer_release(&w);
	lseek(fd, 0, SEEK_SET);
	struct stream_reader r = { 0 };
	struct stream_header rh;
	struct frame f;
	char err[200];
	CHECK(stream_reader_open(&r, fd, "out", &rh) == 0);
	r.order.rules = ORDER_NONE;
	nouts = nstats = 0;
	while (stream_read(&r, &f) > 0) {
		static union stream_any_frame u;
		CHECK(stream_get_frame(&f, &u, err, sizeof(err)) == 0);
		if (f.type == FR_WINDOW_HEAP_STACK && nouts < 16) {
			const struct fr_window_heap_stack *s = &u.window_heap_stack;
			outs[nouts++] = (struct stack_out){ s->locs[0], { s->alloc_objects,
				s->alloc_space, s->inuse_objects, s->inuse_space } };
		} else if (f.type == FR_WINDOW_END) {
			for (uint16_t i = 0; i < u.window_end.nstats; i++, nstats++) {
				snprintf(stat_k[nstats], 64, "%.*s", u.window_end.stats[i].key.len,
					 u.window_end.stats[i].key.p);
				stat_v[nstats] = u.window_end.stats[i].value;
			}
		}
	}
	stream_reader_release(&r);
	close(fd);
	unlink(path);
}

static uint64_t
stat(const char *k)
{
	for (int i = 0; i < nstats; i++)
		if (strcmp(stat_k[i], k) == 0)
			return stat_v[i];
	return ~0ull;
}

static const struct stack_out *
stack_of(uint32_t leaf)
{
	for (int i = 0; i < nouts; i++)
		if (outs[i].leaf == leaf)
			return &outs[i];
	return NULL;
}

/* Frees of blocks never sampled, twice, and moves of unknown blocks change nothing. */
static void
test_frees(void)
{
	struct heap_agg h;
	CHECK(heap_agg_init(&h, 100) == 0);
	alloc(&h, 1, 0x1000, 100, 4, 0);
	release(&h, 0x9000, 0);         /* never sampled */
	release(&h, 0x1000, 0);
	release(&h, 0x1000, 0);         /* twice */
	release(&h, 0x7000, 0x8000);    /* a move of a block never sampled */
	close_window(&h, 0);
	const struct stack_out *s = stack_of(1);
	CHECK(s && s->v[0] == 4 && s->v[1] == 400 && s->v[2] == 0 && s->v[3] == 0);
	CHECK(stat("heap.frees") == 1 && stat("heap.unmatched_frees") == 3);
	CHECK(stat("heap.inuse_space") == 0 && stat("heap.alloc_space") == 400);
	/* A stack without live blocks is gone from the next window. */
	close_window(&h, 1);
	CHECK(nouts == 0 && stat("heap.live_samples") == 0);
	heap_agg_release(&h);
}

/* A realloc chain moves the block under its first stack; in-use persists across windows
 * until the free, and goes to exactly zero. */
static void
test_realloc_chain(void)
{
	struct heap_agg h;
	CHECK(heap_agg_init(&h, 100) == 0);
	alloc(&h, 2, 0x2000, 1000, 2, 0);
	alloc(&h, 3, 0x5000, 64, 8, 0);
	release(&h, 0x2000, 0x3000);
	release(&h, 0x3000, 0x4000);
	close_window(&h, 0);
	const struct stack_out *s = stack_of(2);
	CHECK(s && s->v[2] == 2 && s->v[3] == 2000);
	CHECK(stat("heap.moves") == 2 && stat("heap.inuse_space") == 2000 + 512);
	close_window(&h, 1);            /* no allocation: in-use only */
	s = stack_of(2);
	CHECK(s && s->v[0] == 0 && s->v[1] == 0 && s->v[3] == 2000);
	release(&h, 0x2000, 0);         /* the old address: gone since the move */
	release(&h, 0x4000, 0);
	close_window(&h, 2);
	CHECK(stack_of(2) == NULL && stat("heap.unmatched_frees") == 1);
	CHECK(stat("heap.inuse_space") == 512);
	heap_agg_release(&h);
}

/* A reset forgets every block: their later frees match nothing. */
static void
test_reset(void)
{
	struct heap_agg h;
	CHECK(heap_agg_init(&h, 100) == 0);
	alloc(&h, 4, 0x6000, 4096, 128, 0);
	alloc(&h, 4, 0x6100, 16, 1, ALLOC_UNTRACKED); /* counted, never live */
	struct fr_heap_reset r = { 3, PID, HEAP_RESET_EXEC };
	feed(&h, FR_HEAP_RESET, &r);
	release(&h, 0x6000, 0);
	release(&h, 0x6100, 0);
	close_window(&h, 0);
	const struct stack_out *s = stack_of(4);
	CHECK(s && s->v[0] == 129 && s->v[1] == 128 * 4096 + 16 && s->v[2] == 0 && s->v[3] == 0);
	CHECK(stat("heap.resets") == 1 && stat("heap.unmatched_frees") == 2);
	heap_agg_release(&h);
}

/* A process that ends takes its blocks: its stacks keep the window's allocations but hold
 * nothing in use, its later frees match nothing, and another process's blocks stay. */
static void
test_gone(void)
{
	struct heap_agg h;
	CHECK(heap_agg_init(&h, 100) == 0);
	alloc(&h, 5, 0x7000, 64, 2, 0);
	alloc(&h, 5, 0x7100, 64, 2, 0);
	uint32_t other[2] = { 6, 99 };
	struct heap_entry *e = heap_agg_entry(&h, PID + 1, PID + 1, other, 2);
	CHECK(e && heap_agg_add(&h, e, PID + 1, 0x7000, 32, 1, 1) == 0);
	heap_agg_gone(&h, PID + 2); /* holds nothing: nothing changes */
	heap_agg_gone(&h, PID);
	release(&h, 0x7000, 0);
	close_window(&h, 0);
	const struct stack_out *s = stack_of(5), *o = stack_of(6);
	CHECK(s && s->v[0] == 4 && s->v[1] == 256 && s->v[2] == 0 && s->v[3] == 0);
	CHECK(o && o->v[2] == 1 && o->v[3] == 32);
	CHECK(stat("heap.unmatched_frees") == 1 && stat("heap.resets") == 0);
	/* The next window has no stack of the ended process at all. */
	close_window(&h, 1);
	CHECK(stack_of(5) == NULL && stack_of(6) != NULL);
	heap_agg_release(&h);
}

/* --max-stacks: a stack new to a full window is left out and counted, its block tracked:
 * in the next window it comes back with its in-use values. */
static void
test_cap(void)
{
	struct heap_agg h;
	CHECK(heap_agg_init(&h, 1) == 0);
	alloc(&h, 5, 0xa000, 100, 1 << 20, 0);
	alloc(&h, 6, 0xb000, 300, 2, 0);
	alloc(&h, 6, 0xc000, 300, 2, 0);
	close_window(&h, 0);
	CHECK(nouts == 1 && stack_of(5) != NULL);
	CHECK(stat("heap.aggregation_dropped_alloc_objects") == 4);
	CHECK(stat("heap.aggregation_dropped_alloc_space") == 1200);
	CHECK(stat("heap.aggregation_dropped_inuse_space") == 1200);
	release(&h, 0xa000, 0);         /* stack 5 has nothing left: room for stack 6 */
	release(&h, 0xb000, 0);
	close_window(&h, 1);
	const struct stack_out *s = stack_of(6);
	CHECK(nouts == 1 && s && s->v[2] == 2 && s->v[3] == 600);
	CHECK(stat("heap.aggregation_dropped_inuse_space") == 0);
	heap_agg_release(&h);
}

int
main(void)
{
	int fd = open("/dev/null", O_WRONLY);
	CHECK(fd >= 0);
	enc.fd = fd;
	test_frees();
	test_realloc_chain();
	test_reset();
	test_gone();
	test_cap();
	stream_writer_release(&enc);
	close(fd);
	printf("heap_agg_test: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
