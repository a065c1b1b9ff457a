/*
 * deep_chain [SECONDS]: the hot path is a known chain of six non-inlined functions,
 * main -> chain_1 -> ... -> chain_6, where chain_6 burns the CPU.  build.sh compiles it
 * twice: deep_nofp with -O2 -fomit-frame-pointer (stacks need DWARF unwinding) and deep_fp
 * with frame pointers (a frame-pointer walk is enough), plus deep_nounwind without any
 * unwind tables.  Each link does work after its call so no call becomes a jump.
 */
#include <stdint.h>

#include "common.h"

volatile uint64_t sink;

WL_KEEP uint64_t chain_6(uint64_t deadline)
{
	uint64_t x = sink;

	do {
		for (int i = 0; i < 200000; i++)
			x = x * 6364136223846793005u + 1442695040888963407u;
		sink = x;
	} while (!wl_expired(deadline) && deadline);
	return x;
}

WL_KEEP uint64_t chain_5(uint64_t d) { return chain_6(d) + 5; }
WL_KEEP uint64_t chain_4(uint64_t d) { return chain_5(d) * 3 + 4; }
WL_KEEP uint64_t chain_3(uint64_t d) { return chain_4(d) ^ 3; }
WL_KEEP uint64_t chain_2(uint64_t d) { return chain_3(d) + 2; }
WL_KEEP uint64_t chain_1(uint64_t d) { return chain_2(d) * 7 + 1; }

int main(int argc, char **argv)
{
	uint64_t deadline = wl_deadline(argc, argv);

	sink = chain_1(deadline);
	return 0;
}
