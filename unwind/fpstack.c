#include "fpstack.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "fpchain.h"

/* Direct-mapped: a new stack replaces whatever shared its slot.  Bounded memory: at most
 * FPC_SLOTS stacks of fewer than FP_MAX_FRAMES addresses. */
#define FPC_SLOTS 4096

struct fpc_ent {
	uint64_t hash, gen;
	uint32_t pid, flags;
	uint16_t nkernel, nips, nlocs;
	uint64_t *ips;          /* nips addresses, then room for the nlocs ids */
};

struct fpcache {
	struct fpc_ent ents[FPC_SLOTS];
};

void
fpcache_free(struct fpcache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < FPC_SLOTS; i++)
		free(c->ents[i].ips);
	free(c);
}

void
fpcache_forget(struct fpcache *c, uint32_t pid)
{
	if (!c)
		return;
	for (size_t i = 0; i < FPC_SLOTS; i++) {
		struct fpc_ent *e = &c->ents[i];
		if (e->ips && e->pid == pid) {
			free(e->ips);
			memset(e, 0, sizeof(*e));
		}
	}
}

static uint64_t
hash_ips(uint32_t pid, uint16_t nk, const uint64_t *ips, unsigned n)
{
	uint64_t h = (uint64_t)pid << 32 | (uint64_t)nk << 16 | n;
	for (unsigned i = 0; i < n; i++) {
		h = (h ^ ips[i]) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 32;
	}
	return h;
}

static uint32_t *
ent_locs(struct fpc_ent *e)
{
	return (uint32_t *)(e->ips + e->nips);
}

/* The cached stack of s in process p, or NULL. */
static struct fpc_ent *
lookup(struct fpcache *c, const struct fr_sample *s, const struct proc *p, uint64_t h)
{
	struct fpc_ent *e = &c->ents[h & (FPC_SLOTS - 1)];
	unsigned n = (unsigned)s->nkernel + s->nuser;
	if (!e->ips || e->hash != h || e->gen != p->gen || e->pid != s->pid ||
	    e->nkernel != s->nkernel || e->nips != n ||
	    memcmp(e->ips, s->ips, n * sizeof(*s->ips)) != 0)
		return NULL;
	return e;
}

static void
store(struct fpcache *c, const struct fr_sample *s, const struct proc *p, uint64_t h,
      const struct fr_stack *st)
{
	struct fpc_ent *e = &c->ents[h & (FPC_SLOTS - 1)];
	unsigned n = (unsigned)s->nkernel + s->nuser;
	uint64_t *ips = malloc(n * sizeof(*ips) + st->nlocs * sizeof(uint32_t) + 1);
	if (!ips)
		return; /* a cache: nothing lost but speed */
	free(e->ips);
	*e = (struct fpc_ent){ .hash = h, .gen = p->gen, .pid = s->pid, .flags = st->flags,
			       .nkernel = s->nkernel, .nips = (uint16_t)n, .nlocs = st->nlocs,
			       .ips = ips };
	memcpy(ips, s->ips, n * sizeof(*ips));
	memcpy(ent_locs(e), st->locs, st->nlocs * sizeof(uint32_t));
}

int
fpstack_resolve(struct resolver *r, const struct fr_sample *s, struct fr_stack *out)
{
	unsigned nk = s->nkernel, nu = s->nuser;
	const uint64_t *uips = s->ips + nk;

	memset(out, 0, offsetof(struct fr_stack, locs));
	resolver_saw(r, s->time);
	out->time = s->time;
	out->pid = s->pid;
	out->tid = s->tid;
	out->cpu = s->cpu;
	out->period = s->period;
	if (nk + nu == 0) {
		out->flags = STACK_EMPTY;
		return 0;
	}
	struct proc *p = nu ? proctab_find(&r->procs, s->pid) : NULL;
	/* Only stacks below the limit are cached: the cut and cycle test stay as they are. */
	int cacheable = p && nk + nu < FP_MAX_FRAMES &&
			(r->fpcache || (r->fpcache = calloc(1, sizeof(*r->fpcache))));
	uint64_t h = cacheable ? hash_ips(s->pid, s->nkernel, s->ips, nk + nu) : 0;
	struct fpc_ent *e = cacheable ? lookup(r->fpcache, s, p, h) : NULL;
	if (e) {
		out->flags = e->flags;
		out->nlocs = e->nlocs;
		memcpy(out->locs, ent_locs(e), e->nlocs * sizeof(uint32_t));
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
	if (cacheable)
		store(r->fpcache, s, p, h, out);
	return 0;
}
