/* dwarfstack: the CFI stack walk and its classification (see dwarfstack.h). */
#include "dwarfstack.h"

#include <stddef.h>
#include <string.h>

#include "leb.h"
#include "symbolize.h"


#define EXPR_STACK 16		/* DWARF expression stack depth; CFI expressions use 3 or 4 */
#define ARM64_VA_MASK 0x0000ffffffffffffull	/* strips pointer-authentication bits */

/* The registers a walk knows in the current frame. */
struct regs {
	uint64_t pc, sp, fp, lr;
	int fp_ok, lr_ok;
	int from_lr;	/* pc is the callee's link register, not a value read from its frame */
};

/* The copied stack: bytes of [lo, hi); the offsets read are noted in seen. */
struct copy {
	const uint8_t *bytes;
	uint64_t lo, hi;
	struct dw_hints *seen;
};

enum { STEP_OK, STEP_END, STEP_STACK, STEP_FAIL };

static int read64(const struct copy *c, uint64_t a, uint64_t *v)
{
	if (a < c->lo || c->hi - c->lo < 8 || a - c->lo > c->hi - c->lo - 8)
		return -1;
	struct dw_hints *h = c->seen;
	if (h->n < DW_HINTS)
		h->off[h->n++] = (uint32_t)(a - c->lo);
	memcpy(v, c->bytes + (a - c->lo), 8);	/* the copy has no alignment */
	return 0;
}

static int reg_value(const struct cfitab *t, const struct regs *r, uint64_t reg, uint64_t *v)
{
	if (reg == t->sp_reg)
		*v = r->sp;
	else if (reg == t->fp_reg && r->fp_ok)
		*v = r->fp;
	else if (t->machine == 62 && reg == 16)
		*v = r->pc;	/* rip: the PLT's CFA expression tests it */
	else if (t->machine != 62 && reg == 30 && r->lr_ok)
		*v = r->lr;
	else
		return -1;
	return 0;
}

/* Binary operators: the top two values make one. */
static int binop(uint8_t op, uint64_t *st, int *n)
{
	if (*n < 2)
		return -1;
	uint64_t b = st[--*n], a = st[*n - 1], v;
	switch (op) {
	case 0x1a: v = a & b; break;
	case 0x1c: v = a - b; break;
	case 0x1e: v = a * b; break;
	case 0x21: v = a | b; break;
	case 0x22: v = a + b; break;
	case 0x24: v = b < 64 ? a << b : 0; break;
	case 0x25: v = b < 64 ? a >> b : 0; break;
	case 0x27: v = a ^ b; break;
	case 0x29: v = a == b; break;
	case 0x2a: v = (int64_t)a >= (int64_t)b; break;
	case 0x2b: v = (int64_t)a > (int64_t)b; break;
	case 0x2c: v = (int64_t)a <= (int64_t)b; break;
	case 0x2d: v = (int64_t)a < (int64_t)b; break;
	case 0x2e: v = a != b; break;
	default: return -1;
	}
	st[*n - 1] = v;
	return 0;
}

/* Evaluates the subset of DWARF expressions CFI uses: registers, constants, arithmetic and
 * stack reads.  STEP_OK with *out, STEP_STACK for a read outside the copy, else STEP_FAIL. */
static int eval(const struct cfitab *t, int32_t off, const struct regs *r,
		const struct copy *c, uint64_t *out)
{
	size_t len;
	const uint8_t *p = cfitab_expr(t, off, &len), *end = p + len;
	uint64_t st[EXPR_STACK], v;
	int n = 0, bad = 0;

	if (!p)
		return STEP_FAIL;
	while (p < end) {
		uint8_t op = *p++;
		if (n == EXPR_STACK)
			return STEP_FAIL;
		if (op >= 0x30 && op <= 0x4f) {
			st[n++] = op - 0x30u;			/* DW_OP_lit */
		} else if (op >= 0x70 && op <= 0x8f) {		/* DW_OP_breg */
			if (reg_value(t, r, op - 0x70u, &v) < 0)
				return STEP_FAIL;
			st[n++] = v + (uint64_t)leb_s(&p, end, &bad);
		} else if (op == 0x92) {			/* DW_OP_bregx */
			if (reg_value(t, r, leb_u(&p, end, &bad), &v) < 0)
				return STEP_FAIL;
			st[n++] = v + (uint64_t)leb_s(&p, end, &bad);
		} else if (op == 0x08 || op == 0x10) {		/* const1u, constu */
			st[n++] = op == 0x08 ? (p < end ? *p++ : 0) : leb_u(&p, end, &bad);
		} else if (op == 0x09 || op == 0x11) {		/* const1s, consts */
			st[n++] = op == 0x09 ? (uint64_t)(int64_t)(int8_t)(p < end ? *p++ : 0) :
					       (uint64_t)leb_s(&p, end, &bad);
		} else if (op == 0x06) {			/* deref */
			if (n < 1)
				return STEP_FAIL;
			if (read64(c, st[n - 1], &st[n - 1]) < 0)
				return STEP_STACK;
		} else if (op == 0x23) {			/* plus_uconst */
			if (n < 1)
				return STEP_FAIL;
			st[n - 1] += leb_u(&p, end, &bad);
		} else if (op == 0x12) {			/* dup */
			if (n < 1)
				return STEP_FAIL;
			st[n] = st[n - 1];
			n++;
		} else if (binop(op, st, &n) < 0) {
			return STEP_FAIL;
		}
	}
	if (n < 1 || bad)	/* a number cut short by the expression's end */
		return STEP_FAIL;
	*out = st[n - 1];
	return STEP_OK;
}

/* A saved register's value in the caller: STEP_OK with *v and *ok. */
static int restore(const struct cfitab *t, uint8_t rule, int32_t off, uint64_t cfa,
		   const struct regs *r, const struct copy *c, uint64_t cur, int cur_ok,
		   uint64_t *v, int *ok)
{
	int rc = STEP_OK;

	*ok = 1;
	switch (rule) {
	case REG_SAME: *v = cur; *ok = cur_ok; return STEP_OK;
	case REG_AT_CFA: return read64(c, cfa + (uint64_t)(int64_t)off, v) < 0 ? STEP_STACK :
									       STEP_OK;
	case REG_VAL_CFA: *v = cfa + (uint64_t)(int64_t)off; return STEP_OK;
	case REG_AT_EXPR:
		if ((rc = eval(t, off, r, c, v)) != STEP_OK)
			return rc;
		return read64(c, *v, v) < 0 ? STEP_STACK : STEP_OK;
	case REG_VAL_EXPR: return eval(t, off, r, c, v);
	case REG_UNDEF: *ok = 0; return STEP_END;
	}
	*ok = 0;
	return STEP_FAIL;
}

/* One frame through its CFI row. */
static int step_cfi(const struct cfitab *t, const struct cfirow *row, const struct regs *r,
		    const struct copy *c, struct regs *nr)
{
	uint64_t cfa, ra = 0, fp = 0;
	int rc = STEP_OK, ok, fp_ok;

	if (row->cfa == CFA_SP)
		cfa = r->sp + (uint64_t)(int64_t)row->cfa_off;
	else if (row->cfa == CFA_FP && r->fp_ok)
		cfa = r->fp + (uint64_t)(int64_t)row->cfa_off;
	else if (row->cfa != CFA_EXPR || (rc = eval(t, row->cfa_off, r, c, &cfa)) == STEP_FAIL)
		return STEP_FAIL;
	else if (rc != STEP_OK)
		return rc;
	/* aarch64: an unsaved return address is still in the link register */
	rc = restore(t, row->ra, row->ra_off, cfa, r, c, r->lr, r->lr_ok, &ra, &ok);
	if (rc != STEP_OK)
		return rc;
	if (!ok)
		return STEP_FAIL;
	if (restore(t, row->fp, row->fp_off, cfa, r, c, r->fp, r->fp_ok, &fp, &fp_ok) !=
	    STEP_OK)
		fp_ok = 0;	/* a lost frame register only matters if a caller's CFA uses it */
	*nr = (struct regs){ .pc = ra, .sp = cfa, .fp = fp, .fp_ok = fp_ok,
			     .from_lr = row->ra == REG_SAME };
	return STEP_OK;
}

/* One frame through the frame-pointer record, when it lies in the copy. */
static int step_fp(const struct regs *r, const struct copy *c, struct regs *nr)
{
	uint64_t fp, ra;

	if (!r->fp_ok || r->fp < r->sp || (r->fp & 7) || read64(c, r->fp, &fp) < 0 ||
	    read64(c, r->fp + 8, &ra) < 0)
		return STEP_FAIL;
	*nr = (struct regs){ .pc = ra, .sp = r->fp + 16, .fp = fp, .fp_ok = 1 };
	return STEP_OK;
}

/* The CFI row for pc in mapping m, or NULL when none covers it. */
static const struct cfirow *find_row(struct dwarfstack *d, struct symbolizer *sym,
				     struct map *m, uint64_t pc, const struct cfitab **tab)
{
	uint64_t vaddr;

	if (!m->sym_tried) {
		m->sym_tried = 1;
		m->sym = symbolizer_module(sym, m->path, m->build_id, m->build_id_len);
	}
	if (!m->sym)
		return NULL;
	if (d->last_mod != m->sym) {
		if (!(d->last_tab = cfi_cache_get(d->cfi, m->sym)))
			return NULL;
		d->last_mod = m->sym;
	}
	*tab = d->last_tab;
	if (symmod_offset_to_vaddr(m->sym, pc - m->start + m->pgoff, &vaddr) < 0)
		return NULL;
	struct dw_row_memo *c = &d->rows[(vaddr ^ vaddr >> 10) & (DW_ROW_CACHE - 1)];
	if (c->tab != d->last_tab || c->vaddr != vaddr) {
		const struct cfitab *owner;
		const struct cfirow *row = cfitab_lookup(d->last_tab, vaddr, &owner);
		*c = (struct dw_row_memo){ d->last_tab, vaddr, row, owner };
	}
	*tab = c->owner;
	return c->row;
}

int
dwarfstack_frameless(struct dwarfstack *d, struct symbolizer *sym, struct map *m, uint64_t pc,
		     int *cfa_off, int *ra_off)
{
	const struct cfitab *tab = NULL;
	if (d->machine != 62)
		return -1;
	const struct cfirow *row = find_row(d, sym, m, pc, &tab);
	if (!row || row->cfa != CFA_SP || row->ra != REG_AT_CFA || row->fp != REG_SAME)
		return -1;
	int64_t cfa = row->cfa_off, ra = (int64_t)row->cfa_off + row->ra_off;
	if (cfa <= 0 || cfa > 4096 || ra < 0 || ra >= cfa)
		return -1;
	*cfa_off = (int)cfa;
	*ra_off = (int)ra;
	return 0;
}

static int reg_index(uint64_t mask, unsigned bit)
{
	if (bit >= 64 || !(mask >> bit & 1))
		return -1;
	return __builtin_popcountll(mask & ((1ull << bit) - 1));
}

/* The leaf frame's registers from the sample; -1 without pc and sp. */
static int first_regs(const struct dwarfstack *d, const struct fr_sample_regs *s,
		      struct regs *r)
{
	int x86 = d->machine == 62;
	int pc = reg_index(s->reg_mask, x86 ? DW_PERF_X86_IP : DW_PERF_ARM64_PC);
	int sp = reg_index(s->reg_mask, x86 ? DW_PERF_X86_SP : DW_PERF_ARM64_SP);
	int fp = reg_index(s->reg_mask, x86 ? DW_PERF_X86_BP : DW_PERF_ARM64_X29);
	int lr = x86 ? -1 : reg_index(s->reg_mask, DW_PERF_ARM64_LR);

	memset(r, 0, sizeof(*r));
	if (pc < 0 || sp < 0 || pc >= s->nregs || sp >= s->nregs)
		return -1;
	r->pc = s->regs[pc];
	r->sp = s->regs[sp];
	if ((r->fp_ok = fp >= 0 && fp < s->nregs))
		r->fp = s->regs[fp];
	if ((r->lr_ok = lr >= 0 && lr < s->nregs))
		r->lr = s->regs[lr] & ARM64_VA_MASK;
	return 0;
}

static int step(struct dwarfstack *d, struct symbolizer *sym, struct map *m, uint64_t look,
		const struct regs *r, const struct copy *c, struct regs *nr)
{
	const struct cfitab *t = NULL;
	const struct cfirow *row = find_row(d, sym, m, look, &t);

	if (row)
		return step_cfi(t, row, r, c, nr);
	d->fp_frames++;
	return step_fp(r, c, nr);
}

/* The copy is new memory at every sample (a saved stream is read once), so each word a walk
 * reads is a cache miss, and the walk takes them one after the other: where a frame's return
 * address lies follows from the frame before.  The samples of a loop read the same words at
 * the same offsets from sp, so the words the last walk read are asked for at once, and their
 * misses overlap.  A guess that is wrong costs a wasted fetch, not a wrong stack. */
static void prefetch_hints(struct dw_hints *h, const struct copy *c)
{
	uint64_t len = c->hi - c->lo;
	for (unsigned i = 0; i < h->n; i++)
		if (h->off[i] + 8ull <= len) {
			__builtin_prefetch(c->bytes + h->off[i]);
			__builtin_prefetch(c->bytes + h->off[i] + 7);
		}
	h->n = 0;
}

unsigned dwarfstack_walk(struct dwarfstack *d, struct symbolizer *sym, struct proc *p,
			 const struct fr_sample_regs *s, struct dwframe *out, unsigned max,
			 int *end)
{
	struct copy c = { .bytes = s->stack };
	struct regs r, nr;
	unsigned n = 0;

	d->walks++;
	*end = DW_END_FAILED;
	if (first_regs(d, s, &r) < 0 || max == 0)
		return 0;
	c.lo = r.sp;
	c.hi = r.sp + (s->stack ? s->stack_len : 0);
	if (c.hi < c.lo)
		c.hi = c.lo;
	prefetch_hints(&d->hints, &c);
	c.seen = &d->hints;
	for (;;) {
		uint64_t look = n == 0 ? r.pc : r.pc - 1;	/* the call, not what follows */
		struct map *m = p ? proc_find(p, look) : NULL;
		if (!m) {
			*end = DW_END_MAPPING;
			return n;
		}
		out[n++] = (struct dwframe){ r.pc, m };
		if (n == max) {
			*end = DW_END_TRUNCATED;
			return n;
		}
		int rc = step(d, sym, m, look, &r, &c, &nr);
		if (rc == STEP_OK && d->machine != 62)
			nr.pc &= ARM64_VA_MASK;
		if (rc == STEP_END || (rc == STEP_OK && nr.pc == 0)) {
			*end = DW_END_COMPLETE;
			return n;
		}
		if (rc != STEP_OK) {
			*end = rc == STEP_STACK ? DW_END_STACK : DW_END_FAILED;
			return n;
		}
		/* An aarch64 function that saved nothing (a leaf) has its CFA at sp and its
		 * return address in x30: the one step that may keep sp, and only once, as the
		 * caller's link register is not known. */
		if (nr.sp < r.sp || (nr.sp == r.sp && !nr.from_lr)) {
			*end = DW_END_CYCLE;
			return n;
		}
		/* Field by field: a whole-struct copy reads back, 16 bytes at a time, what
		 * the step has just stored 8 bytes at a time, and stalls on each. */
		r.pc = nr.pc;
		r.sp = nr.sp;
		r.fp = nr.fp;
		r.lr = nr.lr;
		r.fp_ok = nr.fp_ok;
		r.lr_ok = nr.lr_ok;
		r.from_lr = nr.from_lr;
	}
}

int dwarfstack_init(struct dwarfstack *d, uint16_t machine, const char *const *dirs,
		    size_t ndirs, int allow_partial)
{
	memset(d, 0, sizeof(*d));
	d->machine = machine;
	d->allow_partial = allow_partial;
	return (d->cfi = cfi_cache_new(dirs, ndirs)) ? 0 : -1;
}

void dwarfstack_release(struct dwarfstack *d)
{
	cfi_cache_free(d->cfi);
	memset(d, 0, sizeof(*d));
}

/* Flags from the way the walk ended; n is trimmed for a failed walk. */
static uint32_t end_flags(struct dwarfstack *d, int end, unsigned *n)
{
	switch (end) {
	case DW_END_TRUNCATED: return STACK_TRUNCATED;
	case DW_END_CYCLE: return STACK_CYCLE;
	case DW_END_MAPPING: return STACK_OUT_OF_MAPPING;
	case DW_END_FAILED:
		d->failed++;
		if (*n > (d->allow_partial ? 1u : 0u))
			*n = d->allow_partial ? 1 : 0;
		return STACK_UNWIND_FAILED;
	}
	return 0;
}

int dwarfstack_resolve(struct dwarfstack *d, struct resolver *r,
		       const struct fr_sample_regs *s, struct fr_stack *out)
{
	static struct dwframe frames[DW_MAX_FRAMES];
	unsigned nk = s->nkernel < DW_MAX_FRAMES ? s->nkernel : DW_MAX_FRAMES, nu = 0;
	int end = DW_END_COMPLETE;

	memset(out, 0, offsetof(struct fr_stack, locs));
	resolver_saw(r, s->time);
	out->time = s->time;
	out->pid = s->pid;
	out->tid = s->tid;
	out->cpu = s->cpu;
	out->period = s->period;
	if (s->abi != 0 && nk < DW_MAX_FRAMES)
		nu = dwarfstack_walk(d, r->sym, proctab_find(&r->procs, s->pid), s, frames,
				     DW_MAX_FRAMES - nk, &end);
	else if (s->abi != 0)
		end = DW_END_TRUNCATED;
	out->flags = end_flags(d, end, &nu);
	if (s->nkernel > DW_MAX_FRAMES)
		out->flags |= STACK_TRUNCATED;
	for (unsigned i = 0; i < nk; i++) {
		/* As in user space, kernel frames above the leaf are return addresses. */
		uint32_t id = resolve_kernel(r, i == 0 ? s->kips[0] : s->kips[i] - 1);
		if (!id)
			return -1;
		out->locs[out->nlocs++] = id;
	}
	for (unsigned i = 0; i < nu; i++) {
		uint64_t addr = i == 0 ? frames[0].pc : frames[i].pc - 1;
		uint32_t id = resolve_user(r, s->pid, frames[i].map, addr);
		if (!id)
			return -1;
		out->locs[out->nlocs++] = id;
	}
	if (out->nlocs == 0 && !(out->flags & STACK_UNWIND_FAILED))
		out->flags |= STACK_EMPTY;
	if (!(out->flags & (STACK_EMPTY | STACK_CYCLE | STACK_OUT_OF_MAPPING |
			    STACK_UNWIND_FAILED)))
		out->flags |= STACK_USABLE;
	return 0;
}
