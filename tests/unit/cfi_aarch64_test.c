/* unwind/dwarfstack and unwind/cfi with an aarch64 register set, on any host: the prebuilt
 * aarch64 program tests/unit/aarch64/cfichain (cfichain.S, make-cfichain.sh) and a stack
 * made here by hand, as the program's own instructions would have left it, in the leaf:
 *
 *   _start -> outer -> signed -> nofp -> leaf
 *
 * The sample holds x29, x30, sp and pc (perf's PERF_REG_ARM64_* numbering) and the stack
 * bytes; the walk must give the leaf's pc and then each call's return address, read from
 * the program's symbols, and end at _start, whose return address is undefined.  Along the
 * way: a leaf whose return address is still in x30 (its CFA is sp), a frame that saves x30
 * alone, a signed return address (pointer authentication bits above the 48-bit address), a
 * CFA based on x29 restored from a callee's save slot, and locals of garbage between frames.
 * Then the walks that must stop: a copy too short, a sample without x30, a cut chain. */
#include "../../unwind/cfi.h"
#include "../../unwind/dwarfstack.h"
#include "../../unwind/symbolize.h"

#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

#ifndef CFICHAIN
#define CFICHAIN "tests/unit/aarch64/cfichain"
#endif

#define EM_ARM64 183
#define STACK_TOP 0x7ffffff00000ull	/* the leaf's sp: where the copy starts */
#define PAC_BITS 0x002d000000000000ull	/* a pointer signature in x30's top bits */

/* The program's symbols the test needs. */
static struct {
	uint64_t text_lo, text_hi;	/* its executable PT_LOAD */
	uint64_t ret_start, ret_outer, ret_signed, ret_nofp, sample_pc;
} prog;

static void
set_symbol(const char *name, uint64_t v)
{
	static const char *const names[] = { "ret_start", "ret_outer", "ret_signed",
					     "ret_nofp", "sample_pc" };
	uint64_t *slots[] = { &prog.ret_start, &prog.ret_outer, &prog.ret_signed,
			      &prog.ret_nofp, &prog.sample_pc };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(name, names[i]) == 0)
			*slots[i] = v;
}

/* Reads the program's executable segment and its labels: 0, or -1. */
static int
load_program(void)
{
	GElf_Phdr ph;
	GElf_Shdr sh;
	GElf_Sym s;
	size_t n;
	Elf_Scn *scn = NULL;
	Elf *e;
	int fd = open(CFICHAIN, O_RDONLY);

	elf_version(EV_CURRENT);
	if (fd < 0 || !(e = elf_begin(fd, ELF_C_READ, NULL)) || elf_getphdrnum(e, &n) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
			prog.text_lo = ph.p_vaddr & ~0xfffull;
			prog.text_hi = ph.p_vaddr + ph.p_memsz;
		}
	while ((scn = elf_nextscn(e, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB) {
			Elf_Data *d = elf_getdata(scn, NULL);
			for (size_t i = 0; d && sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++)
				if (gelf_getsym(d, (int)i, &s))
					set_symbol(elf_strptr(e, sh.sh_link, s.st_name), s.st_value);
		}
	elf_end(e);
	close(fd);
	return prog.text_hi && prog.ret_start && prog.ret_outer && prog.ret_signed &&
	       prog.ret_nofp && prog.sample_pc ? 0 : -1;
}

/* The stack the chain leaves, from the leaf's sp S up (cfichain.S):
 *   S+0    nofp's slot: x30 = ret_signed                       (nofp's CFA S+16)
 *   S+16   signed's frame: x19, x20 at S+48, x29 at S+64 (outer's frame record), x30 at
 *          S+72 (ret_outer, signed)                             (signed's CFA S+80)
 *   S+80   outer's locals, 48 bytes of garbage
 *   S+128  outer's frame record: x29 = 0 (_start's), x30 = ret_start  (CFA x29 + 32 = S+160)
 * and garbage above, as far as the copy goes. */
#define STACK_LEN 256
static uint8_t stack[STACK_LEN];

static void
put64(unsigned off, uint64_t v)
{
	memcpy(stack + off, &v, 8);
}

static void
make_stack(void)
{
	memset(stack, 0xa5, sizeof(stack));
	put64(0, prog.ret_signed);
	put64(48, 0x1919191919191919ull);
	put64(56, 0x2020202020202020ull);
	put64(64, STACK_TOP + 128);
	put64(72, prog.ret_outer | PAC_BITS);
	put64(128, 0);
	put64(136, prog.ret_start);
}

static struct fr_sample_regs smp;

/* The leaf's sample: x29 (outer's frame record) when with_fp, x30 when with_lr, sp, pc. */
static void
make_sample(int with_fp, int with_lr, uint32_t len)
{
	memset(&smp, 0, sizeof(smp));
	smp.pid = smp.tid = 1;
	smp.abi = 2;
	smp.period = 1000;
	if (with_fp) {
		smp.reg_mask |= 1ull << DW_PERF_ARM64_X29;
		smp.regs[smp.nregs++] = STACK_TOP + 128;
	}
	if (with_lr) {
		smp.reg_mask |= 1ull << DW_PERF_ARM64_LR;
		smp.regs[smp.nregs++] = prog.ret_nofp;
	}
	smp.reg_mask |= 1ull << DW_PERF_ARM64_SP | 1ull << DW_PERF_ARM64_PC;
	smp.regs[smp.nregs++] = STACK_TOP;
	smp.regs[smp.nregs++] = prog.sample_pc;
	smp.stack_len = len;
	smp.stack = stack;
}

struct env {
	struct symbolizer *sym;
	struct proctab procs;
	struct proc *p;
	struct dwarfstack d;
};

static int
setup(struct env *e)
{
	memset(e, 0, sizeof(*e));
	e->sym = symbolizer_new(NULL, 0, NULL);
	e->p = proctab_get(&e->procs, 1);
	struct fr_mmap m = { .pid = 1, .tid = 1, .start = prog.text_lo,
			     .len = ((prog.text_hi - prog.text_lo) + 0xfff) & ~0xfffull,
			     .pgoff = 0, .prot = 5,
			     .path = { CFICHAIN, (uint16_t)strlen(CFICHAIN) } };
	if (!e->sym || !e->p || proc_map(e->p, &m) < 0)
		return -1;
	return dwarfstack_init(&e->d, EM_ARM64, NULL, 0, 0);
}

static void
teardown(struct env *e)
{
	dwarfstack_release(&e->d);
	proctab_release(&e->procs);
	symbolizer_free(e->sym);
}

/* Walks smp: the number of frames, their pcs in pcs[], the end in *end. */
static unsigned
walk(uint64_t *pcs, int *end)
{
	struct dwframe f[DW_MAX_FRAMES];
	struct env e;
	unsigned n = 0;

	CHECK(setup(&e) == 0);
	n = dwarfstack_walk(&e.d, e.sym, e.p, &smp, f, DW_MAX_FRAMES, end);
	for (unsigned i = 0; i < n; i++)
		pcs[i] = f[i].pc;
	teardown(&e);
	return n;
}

static void
print_walk(const char *what, const uint64_t *pcs, unsigned n, int end)
{
	fprintf(stderr, "%s: %u frames, end %d:", what, n, end);
	for (unsigned i = 0; i < n; i++)
		fprintf(stderr, " %#llx", (unsigned long long)pcs[i]);
	fprintf(stderr, "\n");
}

/* Walks smp: it must give n frames, the chain's first ones, and end so. */
static void
expect_walk(const char *what, unsigned want_n, int want_end)
{
	const uint64_t chain[] = { prog.sample_pc, prog.ret_nofp, prog.ret_signed,
				   prog.ret_outer, prog.ret_start };
	uint64_t pcs[DW_MAX_FRAMES];
	int end = -1, same = 1;
	unsigned n = walk(pcs, &end);

	for (unsigned i = 0; i < n && i < 5; i++)
		same &= pcs[i] == chain[i];
	CHECK(n == want_n);
	CHECK(end == want_end);
	CHECK(same);
	if (n != want_n || end != want_end || !same)
		print_walk(what, pcs, n, end);
}

static void
test_walks(void)
{
	/* The whole chain, with and without x29 in the sample: outer's CFA uses the x29
	 * signed saved, not the sample's. */
	make_sample(1, 1, STACK_LEN);
	expect_walk("chain", 5, DW_END_COMPLETE);
	make_sample(0, 1, STACK_LEN);
	expect_walk("chain without x29", 5, DW_END_COMPLETE);
	/* A copy that ends inside signed's frame: the frames found so far, and the end of
	 * the copy (a deeper stack than perf copied), not a failure. */
	make_sample(1, 1, 64);
	expect_walk("short copy", 3, DW_END_STACK);
	/* Without x30 the leaf's return address is nowhere: the walk fails after the leaf. */
	make_sample(1, 0, STACK_LEN);
	expect_walk("no x30", 1, DW_END_FAILED);
	/* A return address outside the program (a corrupt save slot) ends the walk there,
	 * the frames before it kept. */
	make_sample(1, 1, STACK_LEN);
	put64(72, 0x1234);
	expect_walk("out of mapping", 3, DW_END_MAPPING);
	make_stack();
}

int
main(void)
{
	if (load_program() < 0) {
		fprintf(stderr, "cfi_aarch64: cannot read the symbols of %s\n", CFICHAIN);
		return 1;
	}
	make_stack();
	test_walks();
	printf("cfi_aarch64: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
