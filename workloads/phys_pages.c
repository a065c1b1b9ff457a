/*
 * phys_pages [KEEP_PAGES [CHURN_PAGES [SECONDS [HOLD]]]]: known physical page allocations for the
 * physical memory profiles (docs/physical.md).
 *
 *   keep_pages   maps KEEP_PAGES anonymous pages (default 20000), touches each once (one
 *                page fault, one order-0 page), and keeps them until the end
 *   churn_pages  maps CHURN_PAGES pages (default 200000) in blocks of 1000, touches them
 *                and unmaps each block at once, spread over SECONDS (default 2)
 *
 * Transparent huge pages are refused (MADV_NOHUGEPAGE) so that each touch is one 4 KiB
 * page.  At exit it prints the truth on stdout: "page_size N", "keep_pages N",
 * "churn_pages N".  It waits a second before and HOLD seconds after (default 1), the kept
 * pages still mapped, so a recording started next to it sees every touch and the kept
 * pages at a window's end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common.h"

#define BLOCK 1000

static volatile unsigned char sink;

/* Maps n pages and touches each: n order-0 page allocations by this call path. */
static __attribute__((noinline)) unsigned char *
touch_pages(size_t n, size_t page)
{
	unsigned char *p = mmap(NULL, n * page, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("phys_pages: mmap");
		exit(1);
	}
	madvise(p, n * page, MADV_NOHUGEPAGE);
	for (size_t i = 0; i < n; i++)
		p[i * page] = (unsigned char)i;
	sink = p[0];
	return p;
}

static __attribute__((noinline)) unsigned char *
keep_pages(size_t n, size_t page)
{
	return touch_pages(n, page);
}

static __attribute__((noinline)) void
churn_pages(size_t n, size_t page, unsigned seconds)
{
	size_t blocks = (n + BLOCK - 1) / BLOCK;
	useconds_t pause = blocks ? (useconds_t)(seconds * 1000000ull / blocks) : 0;
	for (size_t b = 0; b < blocks; b++) {
		size_t k = n - b * BLOCK < BLOCK ? n - b * BLOCK : BLOCK;
		munmap(touch_pages(k, page), k * page);
		usleep(pause);
	}
}

int
main(int argc, char **argv)
{
	size_t keep = argc > 1 ? strtoul(argv[1], NULL, 10) : 20000;
	size_t churn = argc > 2 ? strtoul(argv[2], NULL, 10) : 200000;
	unsigned seconds = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 10) : 2;
	unsigned hold = argc > 4 ? (unsigned)strtoul(argv[4], NULL, 10) : 1;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	sleep(1);
	unsigned char *kept = keep_pages(keep, page);
	churn_pages(churn, page, seconds);
	sleep(hold);
	printf("page_size %zu\nkeep_pages %zu\nchurn_pages %zu\n", page, keep, churn);
	fflush(stdout);
	sink = kept[0];
	return 0;
}
