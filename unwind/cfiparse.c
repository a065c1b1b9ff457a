/* cfiparse: CIE/FDE parsing and the DWARF call frame interpreter (DWARF 5 section 6.4 and
 * the LSB's .eh_frame), producing one raw row each time the location advances. */
#include "cfibuild.h"

#include <stdlib.h>
#include <string.h>

#include "cfi.h"
#include "leb.h"

#define PE_OMIT 0xff
#define PE_INDIRECT 0x80
#define MAX_REMEMBER 8		/* DW_CFA_remember_state depth; compilers use one or two */

/* A bounded reader; base is the section start, loaded at module address addr. */
struct rd {
	const uint8_t *p, *end, *base;
	uint64_t addr;
	int bad;
};

static uint64_t rd_n(struct rd *r, size_t n)
{
	return leb_fixed(&r->p, r->end, n, &r->bad);
}

static uint64_t rd_uleb(struct rd *r)
{
	return leb_u(&r->p, r->end, &r->bad);
}

static int64_t rd_sleb(struct rd *r)
{
	return leb_s(&r->p, r->end, &r->bad);
}

/* An encoded pointer (DW_EH_PE_*).  apply: add the base it is relative to; only absolute
 * and pc-relative pointers are used for code addresses in the modules we read. */
static uint64_t rd_ptr(struct rd *r, uint8_t enc, int apply)
{
	uint64_t here = r->addr + (uint64_t)(r->p - r->base), v;

	if (enc == PE_OMIT)
		return 0;
	switch (enc & 0x0f) {
	case 0x00: case 0x04: case 0x0c: v = rd_n(r, 8); break;
	case 0x01: v = rd_uleb(r); break;
	case 0x02: v = rd_n(r, 2); break;
	case 0x03: v = rd_n(r, 4); break;
	case 0x09: v = (uint64_t)rd_sleb(r); break;
	case 0x0a: v = (uint64_t)(int64_t)(int16_t)rd_n(r, 2); break;
	case 0x0b: v = (uint64_t)(int64_t)(int32_t)rd_n(r, 4); break;
	default: r->bad = 1; return 0;
	}
	if (!apply)
		return v;
	if ((enc & 0x70) == 0x10)
		return v + here;
	if ((enc & 0x70) != 0 || (enc & PE_INDIRECT))
		r->bad = 1;
	return v;
}

struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t fde_enc;
	uint8_t addr_size;
	int has_z;
	const uint8_t *insn, *insn_end;
};

/* The 'z' augmentation data: only the FDE pointer encoding matters to us. */
static int cie_augmentation(struct rd *r, const char *aug, size_t auglen, struct cie *c)
{
	uint64_t alen = rd_uleb(r);

	if (r->bad || alen > (uint64_t)(r->end - r->p))
		return -1;
	const uint8_t *aend = r->p + alen;
	for (size_t i = 1; i < auglen && !r->bad; i++) {
		if (aug[i] == 'L') {
			rd_n(r, 1);
		} else if (aug[i] == 'P') {
			rd_ptr(r, (uint8_t)rd_n(r, 1), 0);
		} else if (aug[i] == 'R') {
			c->fde_enc = (uint8_t)rd_n(r, 1);
		} else if (aug[i] != 'S' && aug[i] != 'B' && aug[i] != 'G') {
			break;	/* unknown letter: 'z' still tells where the data ends */
		}
	}
	if (r->bad || r->p > aend)
		return -1;
	r->p = aend;
	c->has_z = 1;
	return 0;
}

static int parse_cie(struct rd r, size_t off, int eh, struct cie *c)
{
	unsigned idsz;

	r.p = r.base + off;
	uint64_t length = leb_initial_length(&r.p, r.end, &idsz, &r.bad);
	if (r.bad || length > (uint64_t)(r.end - r.p))
		return -1;
	r.end = r.p + length;
	uint64_t id = rd_n(&r, idsz);
	if (id != (eh ? 0 : idsz == 4 ? 0xffffffffu : UINT64_MAX))
		return -1;
	uint8_t version = (uint8_t)rd_n(&r, 1);
	const char *aug = (const char *)r.p;
	size_t auglen = strnlen(aug, (size_t)(r.end - r.p));
	if (r.bad || (version != 1 && version != 3 && version != 4) ||
	    auglen == (size_t)(r.end - r.p))
		return -1;
	r.p += auglen + 1;
	memset(c, 0, sizeof(*c));
	c->addr_size = 8;
	if (version == 4) {
		c->addr_size = (uint8_t)rd_n(&r, 1);
		if (rd_n(&r, 1) != 0 || (c->addr_size != 8 && c->addr_size != 4))
			return -1;	/* segmented addresses */
	}
	c->code_align = rd_uleb(&r);
	c->data_align = rd_sleb(&r);
	c->ra_reg = version == 1 ? rd_n(&r, 1) : rd_uleb(&r);
	if (aug[0] == 'z' && cie_augmentation(&r, aug, auglen, c) < 0)
		return -1;
	if (r.bad || (aug[0] != 'z' && auglen != 0))
		return -1;	/* "eh" and other pre-'z' forms have an unknown layout */
	c->insn = r.p;
	c->insn_end = r.end;
	return 0;
}

struct rule {
	uint8_t kind;		/* REG_* */
	int64_t off;		/* CFA offset, or pool offset of an expression */
};

struct state {
	uint64_t cfa_reg;
	int64_t cfa_off;	/* or the pool offset of the expression */
	int cfa_expr;
	struct rule ra, fp;
};

struct interp {
	struct cfibuild *b;
	const struct cie *cie;
	uint8_t enc;		/* pointer encoding of DW_CFA_set_loc */
	const uint8_t *sec_base;	/* the section and its address, for pc-relative */
	uint64_t sec_addr;		/* DW_CFA_set_loc operands */
	uint64_t loc, end;
	int emitting;		/* 0 while running the CIE's initial instructions */
	size_t first;		/* index of this FDE's first row */
	struct state cur, init, saved[MAX_REMEMBER];
	int depth;
};

static int64_t pool_add(struct cfibuild *b, const uint8_t *p, size_t n)
{
	if (n > 0xffff)
		return -1;
	if (b->npool && b->pool[b->last_expr] + (b->pool[b->last_expr + 1] << 8) == (int)n &&
	    memcmp(b->pool + b->last_expr + 2, p, n) == 0)
		return (int64_t)b->last_expr;
	if (b->npool + n + 2 > b->pool_cap) {
		size_t cap = (b->pool_cap ? b->pool_cap * 2 : 256) + n + 2;
		uint8_t *np = realloc(b->pool, cap);
		if (!np) {
			b->oom = 1;
			return -1;
		}
		b->pool = np;
		b->pool_cap = cap;
	}
	if (b->npool > INT32_MAX)
		return -1;
	b->last_expr = b->npool;
	b->pool[b->npool] = (uint8_t)n;
	b->pool[b->npool + 1] = (uint8_t)(n >> 8);
	memcpy(b->pool + b->npool + 2, p, n);
	b->npool += n + 2;
	return (int64_t)b->last_expr;
}

static int fits(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

static void rule_out(const struct rule *r, uint8_t *kind, int32_t *off)
{
	*kind = r->kind;
	*off = 0;
	if (r->kind == REG_AT_CFA || r->kind == REG_VAL_CFA || r->kind == REG_AT_EXPR ||
	    r->kind == REG_VAL_EXPR) {
		if (fits(r->off) && r->off >= (r->kind >= REG_AT_EXPR ? 0 : INT32_MIN))
			*off = (int32_t)r->off;
		else
			*kind = REG_BAD;
	}
}

/* Appends the row for the current state at addr (cfa_kind forces CFA_NONE or CFA_BAD). */
static void emit(struct interp *in, uint64_t addr, int cfa_kind)
{
	struct cfibuild *b = in->b;
	struct rawrow w = { .addr = addr, .seq = (uint32_t)b->n };
	const struct state *s = &in->cur;

	if (cfa_kind == CFA_NONE || cfa_kind == CFA_BAD) {
		w.cfa = (uint8_t)cfa_kind;
	} else {
		w.cfa = s->cfa_expr ? CFA_EXPR : s->cfa_reg == b->sp_reg ? CFA_SP :
			s->cfa_reg == b->fp_reg ? CFA_FP : CFA_BAD;
		if (fits(s->cfa_off) && (!s->cfa_expr || s->cfa_off >= 0))
			w.cfa_off = (int32_t)s->cfa_off;
		else
			w.cfa = CFA_BAD;
		rule_out(&s->ra, &w.ra, &w.ra_off);
		rule_out(&s->fp, &w.fp, &w.fp_off);
	}
	if (b->n > in->first) {
		struct rawrow *l = &b->rows[b->n - 1];
		if (l->cfa == w.cfa && l->cfa_off == w.cfa_off && l->ra == w.ra &&
		    l->ra_off == w.ra_off && l->fp == w.fp && l->fp_off == w.fp_off)
			return;	/* same rules: the previous row runs on */
	}
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 1024;
		struct rawrow *nr = realloc(b->rows, cap * sizeof(*nr));
		if (!nr) {
			b->oom = 1;
			return;
		}
		b->rows = nr;
		b->cap = cap;
	}
	b->rows[b->n++] = w;
}

static int advance_to(struct interp *in, uint64_t to)
{
	if (!in->emitting)
		return 0;	/* a location op in a CIE means nothing */
	if (to < in->loc || to > in->end)
		return -1;
	if (to > in->loc)
		emit(in, in->loc, -1);
	in->loc = to;
	return 0;
}

static struct rule *slot(struct interp *in, uint64_t reg)
{
	if (reg == in->cie->ra_reg)
		return &in->cur.ra;
	if (reg == in->b->fp_reg)
		return &in->cur.fp;
	return NULL;	/* a register the walk does not track */
}

static int set_rule(struct interp *in, uint64_t reg, uint8_t kind, int64_t off)
{
	struct rule *r = slot(in, reg);

	if (r)
		*r = (struct rule){ off < 0 && kind >= REG_AT_EXPR ? REG_BAD : kind, off };
	return 0;
}

static int restore(struct interp *in, uint64_t reg)
{
	struct rule *r = slot(in, reg);

	if (r)
		*r = reg == in->cie->ra_reg ? in->init.ra : in->init.fp;
	return 0;
}

static int64_t block(struct interp *in, struct rd *r)
{
	uint64_t n = rd_uleb(r);

	if (r->bad || n > (uint64_t)(r->end - r->p)) {
		r->bad = 1;
		return -1;
	}
	r->p += n;
	return pool_add(in->b, r->p - n, (size_t)n);
}

/* A factored operand; unsigned arithmetic because corrupt input may overflow. */
static int64_t factored(uint64_t v, int64_t f)
{
	return (int64_t)(v * (uint64_t)f);
}

/* The CFA rule ops. */
static int cfa_op(struct interp *in, struct rd *r, uint8_t op)
{
	struct state *s = &in->cur;
	int64_t da = in->cie->data_align;

	switch (op) {
	case 0x0c: s->cfa_reg = rd_uleb(r); s->cfa_off = (int64_t)rd_uleb(r); break;
	case 0x0d: s->cfa_reg = rd_uleb(r); break;
	case 0x0e: s->cfa_off = (int64_t)rd_uleb(r); return 0;
	case 0x0f: s->cfa_off = block(in, r); s->cfa_expr = 1; return 0;
	case 0x12: s->cfa_reg = rd_uleb(r); s->cfa_off = factored((uint64_t)rd_sleb(r), da);
		break;
	case 0x13: s->cfa_off = factored((uint64_t)rd_sleb(r), da); return 0;
	default: return -1;
	}
	s->cfa_expr = 0;
	return 0;
}

static int extended_op(struct interp *in, struct rd *r, uint8_t op)
{
	int64_t da = in->cie->data_align;
	uint64_t reg, reg2;

	switch (op) {
	case 0x00: return 0;
	case 0x01: return advance_to(in, rd_ptr(r, in->enc, 1));
	case 0x02: return advance_to(in, in->loc + rd_n(r, 1) * in->cie->code_align);
	case 0x03: return advance_to(in, in->loc + rd_n(r, 2) * in->cie->code_align);
	case 0x04: return advance_to(in, in->loc + rd_n(r, 4) * in->cie->code_align);
	case 0x05: reg = rd_uleb(r);
		return set_rule(in, reg, REG_AT_CFA, factored(rd_uleb(r), da));
	case 0x06: return restore(in, rd_uleb(r));
	case 0x07: return set_rule(in, rd_uleb(r), REG_UNDEF, 0);
	case 0x08: return set_rule(in, rd_uleb(r), REG_SAME, 0);
	case 0x09: reg = rd_uleb(r); reg2 = rd_uleb(r);
		return set_rule(in, reg, reg == reg2 ? REG_SAME : REG_BAD, 0);
	case 0x0a:
		if (in->depth == MAX_REMEMBER)
			return -1;
		in->saved[in->depth++] = in->cur;
		return 0;
	case 0x0b:
		if (in->depth == 0)
			return -1;
		in->cur = in->saved[--in->depth];
		return 0;
	case 0x10: reg = rd_uleb(r); return set_rule(in, reg, REG_AT_EXPR, block(in, r));
	case 0x11: reg = rd_uleb(r);
		return set_rule(in, reg, REG_AT_CFA, factored((uint64_t)rd_sleb(r), da));
	case 0x14: reg = rd_uleb(r);
		return set_rule(in, reg, REG_VAL_CFA, factored(rd_uleb(r), da));
	case 0x15: reg = rd_uleb(r);
		return set_rule(in, reg, REG_VAL_CFA, factored((uint64_t)rd_sleb(r), da));
	case 0x16: reg = rd_uleb(r); return set_rule(in, reg, REG_VAL_EXPR, block(in, r));
	case 0x2d: return 0;	/* aarch64 negate_ra_state: the walk strips pointer signatures */
	case 0x2e: rd_uleb(r); return 0;	/* GNU_args_size */
	case 0x2f: reg = rd_uleb(r);		/* GNU_negative_offset_extended */
		return set_rule(in, reg, REG_AT_CFA, -factored(rd_uleb(r), da));
	}
	return cfa_op(in, r, op);
}

/* Runs instructions [p, end); -1 on an op we do not know or a bad operand. */
static int run(struct interp *in, const uint8_t *p, const uint8_t *end)
{
	struct rd r = { p, end, in->sec_base, in->sec_addr, 0 };

	while (r.p < r.end) {
		uint8_t op = (uint8_t)rd_n(&r, 1), lo6 = op & 0x3f;
		int rc;
		if (op >> 6 == 1)
			rc = advance_to(in, in->loc + lo6 * in->cie->code_align);
		else if (op >> 6 == 2)
			rc = set_rule(in, lo6, REG_AT_CFA,
				      factored(rd_uleb(&r), in->cie->data_align));
		else if (op >> 6 == 3)
			rc = restore(in, lo6);
		else
			rc = extended_op(in, &r, op);
		if (rc < 0 || r.bad)
			return -1;
	}
	return 0;
}

static void interpret(struct cfibuild *b, const struct cie *c, uint8_t enc, uint64_t lo,
		      uint64_t hi, const uint8_t *p, const uint8_t *end, const struct rd *sec)
{
	struct interp in = { .b = b, .cie = c, .enc = enc, .sec_base = sec->base,
			     .sec_addr = sec->addr, .loc = lo, .end = hi, .first = b->n };

	in.cur.cfa_reg = UINT64_MAX;
	in.cur.ra.kind = REG_SAME;
	in.cur.fp.kind = REG_SAME;
	if (run(&in, c->insn, c->insn_end) < 0 || in.depth != 0) {
		emit(&in, lo, CFA_BAD);
		emit(&in, hi, CFA_NONE);
		return;
	}
	in.init = in.cur;
	in.emitting = 1;
	if (run(&in, p, end) < 0) {
		emit(&in, in.loc, CFA_BAD);
	} else if (in.loc < hi) {
		emit(&in, in.loc, -1);
	}
	in.first = b->n;	/* the end marker is never merged into the FDE's last row */
	emit(&in, hi, CFA_NONE);
}

/* One FDE: its address range, augmentation and instructions. */
static void parse_fde(struct cfibuild *b, struct rd *r, const struct cie *c, int eh)
{
	uint8_t enc = eh ? c->fde_enc : c->addr_size == 8 ? 0x04 : 0x03;
	uint64_t lo = rd_ptr(r, enc, 1), range = rd_ptr(r, enc & 0x0f, 0);

	if (c->has_z) {
		uint64_t alen = rd_uleb(r);
		if (r->bad || alen > (uint64_t)(r->end - r->p))
			return;
		r->p += alen;
	}
	if (r->bad || range == 0 || lo == 0 || lo + range < lo)
		return;	/* lo 0: an FDE of code the linker discarded */
	if (b->indexing) {
		if (b->nfde == b->fde_cap) {
			size_t cap = b->fde_cap ? 2 * b->fde_cap : 256;
			struct cfifde *v = realloc(b->fdes, cap * sizeof(*v));
			if (!v) {
				b->oom = 1;
				return;
			}
			b->fdes = v;
			b->fde_cap = cap;
		}
		b->fdes[b->nfde] = (struct cfifde){ lo, lo + range, b->entry_off, (uint32_t)b->nfde };
		b->nfde++;
		return;
	}
	interpret(b, c, enc, lo, lo + range, r->p, r->end, r);
}

/* The entry at off: an FDE is parsed (its CIE read unless it is the one at *cie_off, which
 * *cie holds).  Returns the next entry's offset, or 0 at the end or at a bad length. */
static size_t parse_entry(struct cfibuild *b, const uint8_t *data, size_t len, uint64_t addr,
			  int eh, size_t off, struct cie *cie, size_t *cie_off)
{
	struct rd r = { data + off, data + len, data, addr, 0 };
	unsigned idsz;
	uint64_t length = leb_initial_length(&r.p, r.end, &idsz, &r.bad);

	if (length == 0 && eh)
		return 0;	/* the terminator */
	if (r.bad || length < idsz || length > (uint64_t)(r.end - r.p))
		return 0;
	r.end = r.p + length;
	size_t id_pos = (size_t)(r.p - data), next = (size_t)(r.end - data);
	uint64_t id = rd_n(&r, idsz);
	if (id == (eh ? 0 : idsz == 4 ? 0xffffffffu : UINT64_MAX))
		return next;	/* a CIE: read when an FDE points at it */
	if (eh && id > id_pos)
		return next;
	uint64_t coff = eh ? id_pos - id : id;
	if (coff >= len)
		return next;
	if (coff != *cie_off) {
		struct rd whole = { data, data + len, data, addr, 0 };
		*cie_off = parse_cie(whole, (size_t)coff, eh, cie) == 0 ? (size_t)coff : SIZE_MAX;
		if (*cie_off == SIZE_MAX)
			return next;
	}
	b->entry_off = off;
	parse_fde(b, &r, cie, eh);
	return next;
}

void cfi_parse_section(struct cfibuild *b, const uint8_t *data, size_t len, uint64_t addr,
		       int eh)
{
	struct cie cie;
	size_t off = 0, cie_off = SIZE_MAX;

	while (len - off >= 4 && !b->oom && (off = parse_entry(b, data, len, addr, eh, off, &cie,
								&cie_off)) != 0)
		;
}

void cfi_parse_entry(struct cfibuild *b, const uint8_t *data, size_t len, uint64_t addr, int eh,
		     size_t off)
{
	struct cie cie;
	size_t cie_off = SIZE_MAX;

	if (off < len && len - off >= 4)
		(void)parse_entry(b, data, len, addr, eh, off, &cie, &cie_off);
}
