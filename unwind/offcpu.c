#include "offcpu.h"

#include <stdio.h>
#include <string.h>

#include "fpstack.h"

static const char *const roots[] = {
	[PHASE_BLOCKED] = "off-CPU blocked",
	[PHASE_PREEMPTED] = "scheduling delay (preempted)",
	[PHASE_YIELDED] = "scheduling delay (yielded)",
};

/* Location ids of the roots, by phase, made on first use (the resolver lives as long as
 * the process, and there is one). */
static uint32_t root_loc[4], root_mapping;

static struct str
S(const char *s)
{
	return (struct str){ s, (uint16_t)strlen(s) };
}

static uint32_t
root(struct resolver *r, uint32_t phase)
{
	if (root_loc[phase])
		return root_loc[phase];
	if (!root_mapping) {
		root_mapping = r->next_mapping_id++;
		struct fr_mapping m = { .id = root_mapping, .flags = MAPPING_HAS_FUNCTIONS,
					.path = S("[off-cpu]") };
		if (stream_put_mapping(r->out, &m) < 0)
			return 0;
	}
	/* The key format of resolve.c's functions: name, system name, file, start line. */
	char key[128];
	int n = snprintf(key, sizeof(key), "%s%c%s%c%c0", roots[phase], 0, roots[phase], 0, 0);
	int is_new;
	uint32_t fid = intern_text(&r->funcs, key, (size_t)n, &is_new);
	if (!fid)
		return 0;
	if (is_new) {
		struct fr_function f = { fid, 0, S(roots[phase]), S(roots[phase]), S("") };
		if (stream_put_function(r->out, &f) < 0)
			return 0;
	}
	static struct fr_location loc;
	memset(&loc, 0, sizeof(loc));
	loc.id = intern_add(&r->locs, root_mapping, phase);
	loc.mapping_id = root_mapping;
	loc.address = phase;
	loc.nlines = 1;
	loc.lines[0] = (struct fr_line){ fid, 0 };
	if (!loc.id || stream_put_location(r->out, &loc) < 0)
		return 0;
	return root_loc[phase] = loc.id;
}

int
offcpu_resolve(struct resolver *r, const struct fr_offcpu *in, struct stream_writer *out)
{
	static struct fr_sample s;
	static struct fr_stack st;
	static struct fr_offcpu_stack os;

	s.time = in->end;
	s.pid = in->pid;
	s.tid = in->tid;
	s.cpu = in->cpu;
	s.period = in->end - in->start;
	s.nkernel = in->nkernel;
	s.nuser = in->nuser;
	memcpy(s.ips, in->ips, ((size_t)in->nkernel + in->nuser) * sizeof(in->ips[0]));
	if (fpstack_resolve(r, &s, &st) < 0)
		return -1;
	uint32_t id = root(r, in->phase);
	if (!id)
		return -1;
	os = (struct fr_offcpu_stack){ .start = in->start, .end = in->end, .pid = in->pid,
				       .tid = in->tid, .cpu = in->cpu, .phase = in->phase,
				       .flags = in->flags, .stack_flags = st.flags,
				       .nmore = in->nmore, .more = in->more };
	/* The root goes last (the outermost frame); a stack at the limit loses its leaf. */
	unsigned keep = st.nlocs < STREAM_MAX_LOCS ? st.nlocs : STREAM_MAX_LOCS - 1;
	unsigned skip = st.nlocs - keep;
	memcpy(os.locs, st.locs + skip, keep * sizeof(st.locs[0]));
	os.locs[keep] = id;
	os.nlocs = (uint16_t)(keep + 1);
	return stream_put_offcpu_stack(out, &os);
}
