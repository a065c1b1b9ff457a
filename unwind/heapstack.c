#include "heapstack.h"

#include <string.h>

#include "fpstack.h"

/* The allocation as the sample a CPU stack would come from: no kernel frames, the leaf one
 * byte back into its call. */
static int
as_stack(struct resolver *r, struct dwarfstack *dw, const struct fr_alloc *in,
	 struct fr_stack *st)
{
	static struct fr_sample s;
	static struct fr_sample_regs sr;
	if (in->abi) {
		memset(&sr, 0, offsetof(struct fr_sample_regs, kips));
		sr.time = in->time;
		sr.pid = in->pid;
		sr.tid = in->tid;
		sr.abi = in->abi;
		sr.period = in->weight;
		sr.nregs = in->nregs;
		sr.reg_mask = in->reg_mask;
		sr.stack_len = in->stack_len;
		sr.stack = in->stack;
		memcpy(sr.regs, in->regs, in->nregs * sizeof(in->regs[0]));
		int pc = __builtin_popcountll(in->reg_mask & ((1ull << (dw->machine == 62 ?
				DW_PERF_X86_IP : DW_PERF_ARM64_PC)) - 1));
		if ((in->reg_mask >> (dw->machine == 62 ? DW_PERF_X86_IP : DW_PERF_ARM64_PC) & 1) &&
		    sr.regs[pc])
			sr.regs[pc]--;
		return dwarfstack_resolve(dw, r, &sr, st);
	}
	memset(&s, 0, offsetof(struct fr_sample, ips));
	s.time = in->time;
	s.pid = in->pid;
	s.tid = in->tid;
	s.period = in->weight;
	s.nuser = in->nuser;
	memcpy(s.ips, in->ips, in->nuser * sizeof(in->ips[0]));
	if (s.nuser && s.ips[0])
		s.ips[0]--;
	return fpstack_resolve(r, &s, st);
}

int
heapstack_resolve(struct resolver *r, struct dwarfstack *dw, const struct fr_alloc *in,
		  struct stream_writer *out)
{
	static struct fr_stack st;
	static struct fr_heap_stack hs;
	if (as_stack(r, dw, in, &st) < 0)
		return -1;
	memset(&hs, 0, offsetof(struct fr_heap_stack, locs));
	hs.time = in->time;
	hs.pid = in->pid;
	hs.tid = in->tid;
	hs.addr = in->addr;
	hs.size = in->size;
	hs.weight = in->weight;
	hs.flags = in->flags;
	hs.stack_flags = st.flags;
	hs.nlocs = st.nlocs;
	memcpy(hs.locs, st.locs, st.nlocs * sizeof(st.locs[0]));
	return stream_put_heap_stack(out, &hs);
}
