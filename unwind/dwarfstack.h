/*
 * DWARF stacks: the user stack of an FR_SAMPLE_REGS is walked from the captured registers
 * through the copied stack bytes with each module's CFI table (cfi.h), then classified and
 * resolved like a frame-pointer stack (fpstack.h).
 *
 * Each step finds the module of the pc (the leaf's own address, return address - 1 above
 * it), its CFI row for the module's virtual address, computes the CFA and reads the return
 * address and the caller's frame register.  Reads are bounds-checked against the copy.
 * The walk ends:
 *   - complete: the return address rule is "undefined" (_start, thread starts) or it is 0;
 *   - at the end of the copy: a read falls outside the copied bytes (a stack deeper than
 *     the copy); the frames found are right, the stack stays usable;
 *   - truncated: at 127 frames, kernel and user together (STACK_TRUNCATED);
 *   - cyclic: a CFA that does not grow (STACK_CYCLE), except once where the return address
 *     is still in the link register (an aarch64 leaf that saved nothing: its CFA is sp);
 *   - out of mapping: a return address outside every executable mapping
 *     (STACK_OUT_OF_MAPPING, the frames before it are kept);
 *   - failed: a rule the walk cannot follow, or a pc no CFI covers when the frame-pointer
 *     fallback is not possible (STACK_UNWIND_FAILED).
 * Where no CFI covers a pc (a module without unwind tables, no ELF file, JIT code) that one
 * frame is unwound through the frame-pointer record (x86_64 [rbp] = caller's rbp,
 * [rbp + 8] = return address; aarch64 the same with x29), but only when the frame pointer
 * lies in the copied stack, at or above the stack pointer: a register that merely holds data
 * almost never passes that and the mapping check on the address it yields.
 * Cyclic, out-of-mapping and failed stacks are not usable.  A failed walk keeps no user
 * frame, or with allow_partial the leaf alone, so the profile still shows where time went.
 */
#ifndef RP_DWARFSTACK_H
#define RP_DWARFSTACK_H

#include <stdint.h>

#include "cfi.h"
#include "procmaps.h"
#include "resolve.h"
#include "stream.h"

#define DW_MAX_FRAMES 127	/* the manual's per-sample limit, kernel and user together */

/* perf register numbers (PERF_REG_X86_*, PERF_REG_ARM64_*) the walk starts from */
#define DW_PERF_X86_BP 6
#define DW_PERF_X86_SP 7
#define DW_PERF_X86_IP 8
#define DW_PERF_ARM64_X29 29
#define DW_PERF_ARM64_LR 30
#define DW_PERF_ARM64_SP 31
#define DW_PERF_ARM64_PC 32

enum dw_end {
	DW_END_COMPLETE,	/* reached the outermost frame */
	DW_END_STACK,		/* a read fell outside the stack copy */
	DW_END_TRUNCATED,	/* the frame limit */
	DW_END_CYCLE,		/* the CFA did not grow */
	DW_END_MAPPING,		/* a pc outside every executable mapping */
	DW_END_FAILED,		/* no usable CFI and no frame-pointer fallback */
};

struct dwframe {
	uint64_t pc;		/* the leaf's pc, then return addresses as read */
	struct map *map;
};

/* The CFI row found for a module address: samples repeat the same few pcs. */
#define DW_ROW_CACHE 1024
struct dw_row_memo {
	const struct cfitab *tab;	/* the module's table */
	uint64_t vaddr;
	const struct cfirow *row;
	const struct cfitab *owner;	/* the table the row belongs to (cfitab_lookup) */
};

/* The offsets from sp of the stack words a walk read, for the next walk to ask for early. */
#define DW_HINTS 32
struct dw_hints {
	uint32_t off[DW_HINTS];
	unsigned n;
};

struct dwarfstack {
	struct cfi_cache *cfi;
	struct dw_row_memo rows[DW_ROW_CACHE];	/* direct-mapped by vaddr */
	struct dw_hints hints;	/* the last walk's reads */
	uint16_t machine;	/* the stream's e_machine */
	int allow_partial;
	const struct symmod *last_mod;	/* the table of the last module used */
	const struct cfitab *last_tab;
	uint64_t walks, failed, fp_frames;	/* counters for diagnostics and tests */
};

/* dirs: the symbol directories (and module cache) searched for separate debug files.
 * 0, or -1 when out of memory. */
int dwarfstack_init(struct dwarfstack *d, uint16_t machine, const char *const *dirs,
		    size_t ndirs, int allow_partial);
/* Walks the user stack of s in process p (may be NULL), opening modules through sym.
 * Fills out[0..n) leaf first and returns n (at most max); *end says why it stopped.
 * Frames past a DW_END_MAPPING pc are not included. */
unsigned dwarfstack_walk(struct dwarfstack *d, struct symbolizer *sym, struct proc *p,
			 const struct fr_sample_regs *s, struct dwframe *out, unsigned max,
			 int *end);
/* Fills out (kernel frames leaf first, then user frames leaf first) as fpstack_resolve
 * does.  0, or -1 on a write error. */
int dwarfstack_resolve(struct dwarfstack *d, struct resolver *r,
		       const struct fr_sample_regs *s, struct fr_stack *out);
/* One step of a frame-pointer walk's blind spot (x86_64): the function at pc in mapping m
 * (pc itself for the leaf, a return address - 1 above it) has set up no frame: its CFA is
 * sp + *cfa_off, its return address is saved at sp + *ra_off, and the frame pointer is
 * still its caller's, so a frame-pointer walk skips its caller.  0 then; -1 when it has a
 * frame or its CFI does not say. */
int dwarfstack_frameless(struct dwarfstack *d, struct symbolizer *sym, struct map *m,
			 uint64_t pc, int *cfa_off, int *ra_off);
void dwarfstack_release(struct dwarfstack *d);

#endif
