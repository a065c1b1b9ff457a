/*
 * collect's cut of DWARF stack copies at the main thread's start_stack (collect/stacktop.h):
 * on crafted copies, where every part of the proof (argc, argv's NULL, argv[0]) is broken in
 * turn, and on this process's own stack as the kernel laid it out.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../collect/procfs.h"
#include "../../collect/stacktop.h"
#include "le.h"

#include "check.h"

#define SP 0x7ffc00000000ull
#define LEN 4096u
#define OFF 1000u /* start_stack's offset in the crafted copies */

static uint8_t copy[LEN];

/* A copy whose start_stack at OFF holds argc, argv[] pointing above, and the NULL. */
static void
craft(uint64_t argc)
{
	memset(copy, 0xa5, sizeof(copy));
	st64(copy + OFF, argc);
	for (uint64_t i = 0; i < argc; i++)
		st64(copy + OFF + 8 + 8 * i, SP + OFF + 512 + 16 * i);
	st64(copy + OFF + 8 + 8 * argc, 0);
}

static void
test_crafted(void)
{
	const uint64_t top = SP + OFF;

	craft(2);
	CHECK(stacktop_cut(SP, copy, LEN, top) == OFF + 8);
	/* no start_stack known, or not inside the copy */
	CHECK(stacktop_cut(SP, copy, LEN, 0) == LEN);
	CHECK(stacktop_cut(SP, copy, LEN, SP) == LEN);
	CHECK(stacktop_cut(SP, copy, LEN, SP - 8) == LEN);
	CHECK(stacktop_cut(SP, copy, LEN, SP + LEN - 16) == LEN);
	CHECK(stacktop_cut(SP, copy, 16, top) == 16);
	/* argc 0 */
	craft(0);
	CHECK(stacktop_cut(SP, copy, LEN, top) == LEN);
	/* argv not ended by NULL */
	craft(2);
	st64(copy + OFF + 24, SP + OFF + 600);
	CHECK(stacktop_cut(SP, copy, LEN, top) == LEN);
	/* argv[0] into the pointer arrays, or a gigabyte away */
	craft(2);
	st64(copy + OFF + 8, SP + OFF + 16);
	CHECK(stacktop_cut(SP, copy, LEN, top) == LEN);
	st64(copy + OFF + 8, SP + OFF + STACKTOP_ARGS_MAX + 8);
	CHECK(stacktop_cut(SP, copy, LEN, top) == LEN);
	/* more arguments than the copy holds */
	craft(2);
	st64(copy + OFF, (LEN - OFF) / 8);
	CHECK(stacktop_cut(SP, copy, LEN, top) == LEN);
	/* frame bytes, as a sample of another image has there */
	memset(copy, 0x41, sizeof(copy));
	CHECK(stacktop_cut(SP, copy, LEN, top) == LEN);
}

/* The end of this process's [stack] mapping, or 0. */
static uint64_t
stack_end(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	uint64_t lo, hi, end = 0;
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[stack]") && sscanf(line, "%" SCNx64 "-%" SCNx64, &lo, &hi) == 2)
			end = hi;
	if (f)
		fclose(f);
	return end;
}

/* This process's stack: the kernel put argc and argv at start_stack, and a copy from a
 * frame of main is cut right after argc.  (Other threads' copies, which never reach it, are
 * tests/unwind.bats's: a thread here would hang under qemu-user in check-aarch64.) */
static void
test_own_stack(int argc, char **argv)
{
	uint64_t top = 0, end = stack_end();
	CHECK(procfs_start_stack(getpid(), &top) == 0);
	CHECK(top != 0 && end > top);
	if (!top || end <= top)
		return;
	const uint64_t *at = (const uint64_t *)(uintptr_t)top;
	CHECK(at[0] == (uint64_t)argc);
	CHECK(at[1] == (uint64_t)(uintptr_t)argv[0]);

	volatile uint8_t here = 0;
	uint64_t sp = (uint64_t)(uintptr_t)&here & ~(uint64_t)15;
	uint64_t n = end - sp > 16384 ? 16384 : end - sp;
	CHECK(top > sp && top - sp < n);
	uint8_t *c = malloc(n);
	CHECK(c != NULL);
	if (!c)
		return;
	memcpy(c, (const void *)(uintptr_t)sp, n);
	struct stacktop t = { 0 };
	CHECK(stacktop_trim(&t, (uint32_t)getpid(), sp, c, (uint32_t)n) == top - sp + 8);
	CHECK(t.cut_samples == 1 && t.cut_bytes == n - (top - sp + 8));
	/* again from the table, and after an exec is announced */
	CHECK(stacktop_trim(&t, (uint32_t)getpid(), sp, c, (uint32_t)n) == top - sp + 8);
	stacktop_forget(&t, (uint32_t)getpid());
	CHECK(stacktop_trim(&t, (uint32_t)getpid(), sp, c, (uint32_t)n) == top - sp + 8);
	/* a start_stack that is not this copy's (another image): the bytes refuse it */
	CHECK(stacktop_cut(sp, c, (uint32_t)n, top - 64) == n);
	/* a process that does not exist: nothing is cut */
	CHECK(stacktop_trim(&t, 0x7ffffff0u, sp, c, (uint32_t)n) == n);
	free(c);
	stacktop_free(&t);
}

/* Many processes: the table grows to its bound, then starts again. */
static void
test_table(void)
{
	struct stacktop t = { 0 };
	int bounded = 1;
	craft(1);
	for (uint32_t i = 0; i < STACKTOP_MAX_PROCESSES + 100; i++) {
		/* pids no process has: each is one failed open of /proc/PID/stat */
		if (stacktop_trim(&t, 0x7f000000u + i, SP, copy, LEN) != LEN)
			bounded = 0;
		bounded &= t.n <= STACKTOP_MAX_PROCESSES && t.cap <= STACKTOP_MAX_PROCESSES;
	}
	CHECK(bounded);
	CHECK(t.n < 200); /* it started again */
	stacktop_free(&t);
	CHECK(t.top == NULL && t.n == 0);
}

int
main(int argc, char **argv)
{
	test_crafted();
	test_own_stack(argc, argv);
	test_table();
	printf("stacktop_test: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
