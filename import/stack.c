/*
 * The addresses of one sample, in the layout of FR_SAMPLE: kernel frames leaf first, then
 * user frames leaf first.
 *
 * The callchain is split at its context markers.  The leaf is the sample's IP (perf report
 * charges self time to it; with a precise event the chain's first entry is where the
 * interrupt came, a few instructions on), placed in the address space the IP belongs to:
 * perf looks an address up in the space the header's cpumode names and, when no map there
 * holds it, in the space of the address (thread__find_map_fb), so a user IP under a kernel
 * cpumode is a user frame and a kernel IP under a user cpumode a kernel one.  A user leaf
 * has no kernel frames above it.
 *
 * With an LBR call stack (--call-graph lbr) the user frames come from the branch records,
 * as perf builds them: the leaf, then the source of each recorded call.  unwind reads every
 * frame above the leaf as a return address and looks up the address before it, so each call
 * site goes in plus one: the lookup lands on the call instruction itself.
 */
#include <linux/perf_event.h>
#include <string.h>

#include "import.h"

/* Entries before any marker belong to the space the header names. */
static void
split(struct imp *m, const struct body *b, int kernel_first, uint64_t *kern, size_t *nk,
      uint64_t *user, size_t *nu)
{
	int mode = kernel_first ? 1 : 2;
	*nk = *nu = 0;
	for (uint64_t i = 0; i < b->nr && *nk + *nu < STREAM_MAX_IPS - 1; i++) {
		uint64_t ip = bo64(m->bo, b->chain + 8 * i);
		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			mode = ip == (uint64_t)PERF_CONTEXT_KERNEL ? 1 :
			       ip == (uint64_t)PERF_CONTEXT_USER ? 2 : 0;
			continue;
		}
		if (mode == 1)
			kern[(*nk)++] = ip;
		else if (mode == 2)
			user[(*nu)++] = ip;
	}
}

int
stack_ip_is_kernel(const struct imp *m, uint64_t ip, int header_kernel)
{
	return m->kernel_start ? ip >= m->kernel_start : header_kernel;
}

static size_t
lbr_user(struct imp *m, const struct body *b, uint64_t *user, size_t nu, int leaf_known,
	 size_t room)
{
	uint64_t leaf = leaf_known || nu ? user[0] : bo64(m->bo, b->br + 8);
	nu = 0;
	user[nu++] = leaf;
	for (uint64_t k = 0; k < b->nbr && nu < room; k++) {
		uint64_t from = bo64(m->bo, b->br + 24 * k);
		if (from == 0 || stack_ip_is_kernel(m, from, 0))
			break;
		user[nu++] = from + 1;
	}
	return nu;
}

/* Fills s->ips, s->nkernel and s->nuser from the sample body. */
void
stack_build(struct imp *m, const struct attr *a, const struct body *b, uint16_t misc,
	    struct fr_sample *s)
{
	static uint64_t user[STREAM_MAX_IPS];
	int hdr_kernel = (misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
	size_t nk, nu;
	int user_leaf = 0;
	split(m, b, hdr_kernel, s->ips, &nk, user, &nu);
	if (b->has_ip && stack_ip_is_kernel(m, b->ip, hdr_kernel)) {
		s->ips[0] = b->ip;
		nk += nk == 0;
	} else if (b->has_ip) {
		nk = 0;
		user[0] = b->ip;
		nu += nu == 0;
		user_leaf = 1;
	}
	if ((a->sample_type & PERF_SAMPLE_BRANCH_STACK) &&
	    (a->branch_sample_type & PERF_SAMPLE_BRANCH_CALL_STACK) && b->nbr)
		nu = lbr_user(m, b, user, nu, user_leaf, STREAM_MAX_IPS - nk);
	memcpy(s->ips + nk, user, nu * sizeof(*user));
	s->nkernel = (uint16_t)nk;
	s->nuser = (uint16_t)nu;
}
