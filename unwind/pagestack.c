#include "pagestack.h"

#include <stddef.h>
#include <string.h>

#include "fpstack.h"

int
pagestack_resolve(struct resolver *r, const struct fr_page_alloc *in,
		  struct stream_writer *out)
{
	static struct fr_sample s;
	static struct fr_stack st;
	static struct fr_page_stack ps;
	memset(&s, 0, offsetof(struct fr_sample, ips));
	s.time = in->time;
	s.pid = in->pid;
	s.tid = in->tid;
	s.period = 1;
	s.nuser = in->nuser;
	memcpy(s.ips, in->ips, in->nuser * sizeof(in->ips[0]));
	if (fpstack_resolve(r, &s, &st) < 0)
		return -1;
	memset(&ps, 0, offsetof(struct fr_page_stack, locs));
	ps.time = in->time;
	ps.pid = in->pid;
	ps.tid = in->tid;
	ps.pfn = in->pfn;
	ps.order = in->order;
	ps.flags = in->flags;
	ps.stack_flags = st.flags;
	ps.nlocs = st.nlocs;
	memcpy(ps.locs, st.locs, st.nlocs * sizeof(st.locs[0]));
	return stream_put_page_stack(out, &ps);
}
