/*
 * fp_degrade GOOD TOTAL: for GOOD seconds spins at the end of a frame-pointer chain
 * (main, good_outer, good_middle, good_inner), then until TOTAL seconds in bad_spin, a
 * loop that keeps %rbp pointing at a fake frame whose return address is 0x10.  A
 * frame-pointer callchain taken there holds an address outside every mapping, while the
 * loop's CFI stays correct, so DWARF unwinding still reaches main.  It is the program whose
 * stacks pass an FP calibration and then go bad.  x86_64 only (elsewhere it exits 3).
 */
#include <stdint.h>

#include "common.h"

volatile uint64_t sink;

#if defined(__x86_64__)
/* A fake frame: no next frame, return address 0x10 (never mapped). */
uint64_t fake_frame[2] = { 0, 0x10 };

void bad_spin(uint64_t iterations);
__asm__(".text\n"
	".globl bad_spin\n"
	".type bad_spin, @function\n"
	"bad_spin:\n"
	".cfi_startproc\n"
	"	push %rbp\n"
	".cfi_adjust_cfa_offset 8\n"
	".cfi_rel_offset %rbp, 0\n"
	"	lea fake_frame(%rip), %rbp\n"
	"1:	dec %rdi\n"
	"	jnz 1b\n"
	"	pop %rbp\n"
	".cfi_adjust_cfa_offset -8\n"
	".cfi_restore %rbp\n"
	"	ret\n"
	".cfi_endproc\n"
	".size bad_spin, .-bad_spin\n");

WL_KEEP void bad_phase(uint64_t deadline)
{
	while (!wl_expired(deadline))
		bad_spin(20000000);
}

WL_KEEP void good_inner(void)
{
	uint64_t x = sink;
	for (int i = 0; i < 100000; i++)
		x = x * 2862933555777941757u + 3037000493u;
	sink = x;
}

WL_KEEP void good_middle(void)
{
	good_inner();
	sink++;
}

WL_KEEP void good_outer(uint64_t deadline)
{
	while (!wl_expired(deadline))
		good_middle();
}

int main(int argc, char **argv)
{
	if (argc != 3)
		errx(2, "usage: fp_degrade GOOD_SECONDS TOTAL_SECONDS");
	uint64_t good = wl_deadline(2, argv), total = wl_deadline(2, argv + 1);
	good_outer(good);
	bad_phase(total);
	return 0;
}
#else
int main(void)
{
	return 3;
}
#endif
