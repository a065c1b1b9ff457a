#include "fpstack.h"

#include <stddef.h>
#include <string.h>

#include "fpchain.h"

int
fpstack_resolve(struct resolver *r, const struct fr_sample *s, struct fr_stack *out)
{
	unsigned nk = s->nkernel, nu = s->nuser;
	const uint64_t *uips = s->ips + nk;

	memset(out, 0, offsetof(struct fr_stack, locs));
	out->time = s->time;
	out->pid = s->pid;
	out->tid = s->tid;
	out->cpu = s->cpu;
	out->period = s->period;
	if (nk + nu == 0) {
		out->flags = STACK_EMPTY;
		return 0;
	}
	if (nk + nu >= FP_MAX_FRAMES) {
		out->flags |= STACK_TRUNCATED;
		if (nk > FP_MAX_FRAMES)
			nk = FP_MAX_FRAMES;
		if (nu > FP_MAX_FRAMES - nk)
			nu = FP_MAX_FRAMES - nk;
		if (fpchain_cyclic(uips, s->nuser))
			out->flags |= STACK_CYCLE;
	}
	for (unsigned i = 0; i < nk; i++) {
		/* As in user space, kernel frames above the leaf are return addresses. */
		uint32_t id = resolve_kernel(r, i == 0 ? s->ips[0] : s->ips[i] - 1);
		if (!id)
			return -1;
		out->locs[out->nlocs++] = id;
	}
	struct proc *p = nu ? proctab_get(&r->procs, s->pid) : NULL;
	for (unsigned i = 0; i < nu; i++) {
		/* Above the leaf the chain holds return addresses: the call is the byte before. */
		uint64_t addr = i == 0 ? uips[0] : uips[i] - 1;
		struct map *m = p ? proc_find(p, addr) : NULL;
		if (!m) {
			out->flags |= STACK_OUT_OF_MAPPING;
			break;
		}
		uint32_t id = resolve_user(r, s->pid, m, addr);
		if (!id)
			return -1;
		out->locs[out->nlocs++] = id;
	}
	if (out->nlocs == 0)
		out->flags |= STACK_EMPTY;
	if (!(out->flags & (STACK_EMPTY | STACK_CYCLE | STACK_OUT_OF_MAPPING)))
		out->flags |= STACK_USABLE;
	return 0;
}
