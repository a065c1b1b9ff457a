#include "svg.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WIDTH 1200
#define PAD 10
#define FRAME_H 16
#define HEAD_H 72               /* title, subtitle, truncation line */
#define CHAR_W 7.0              /* average width of a 12px Verdana character */
#define NARROW_PER_MILLE 1      /* children under 0.1% of the total are merged */

enum box_kind { BOX_NODE, BOX_MERGED, BOX_TRUNC };

struct item {
	uint32_t node, depth;
	uint64_t x;             /* offset from the left, in value units */
};

struct render {
	const struct flame *t;
	struct bufout *out;     /* NULL in the measuring pass */
	uint64_t total;
	double scale;           /* pixels per value unit */
	const char *unit;
	uint32_t maxdepth, nboxes;
	int capped;             /* the box cap was reached */
	double base_y;          /* top of the depth-0 row */
	struct item *stack;
	size_t nstack;
};

/* A stable colour from the label's bytes, so one function has one colour everywhere. */
static void
colour(const char *s, int kind, int *r, int *g, int *b)
{
	uint32_t h = 2166136261u;
	double v1, v2;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	v1 = (h & 0xffff) / 65535.0;
	v2 = (h >> 16) / 65535.0;
	switch (kind) {
	case WF_KERNEL:         /* FlameGraph's "aqua" */
		*r = 50 + (int)(60 * v1), *g = 165 + (int)(55 * v1), *b = 165 + (int)(55 * v2);
		break;
	case WF_UNSYMBOLIZED:
		*r = *g = *b = 165 + (int)(45 * v1);
		break;
	case WF_ROOT:
		*r = 190 + (int)(30 * v1), *g = 170 + (int)(30 * v1), *b = 220;
		break;
	default:                /* FlameGraph's "hot" */
		*r = 205 + (int)(50 * v2), *g = (int)(230 * v1), *b = (int)(55 * v2);
	}
}

static const char *
kind_note(int kind)
{
	return kind == WF_KERNEL ? " [kernel]" : kind == WF_UNSYMBOLIZED ? " [unsymbolized]" : "";
}

static void
write_box(struct render *r, enum box_kind bk, uint32_t node, uint64_t value, uint64_t x,
	  uint32_t depth, uint32_t nmerged)
{
	const struct flame *t = r->t;
	struct bufout *o = r->out;
	char label[64];
	const char *name = label, *note = "", *fill = NULL;
	size_t len;
	int kind = WF_ROOT, cr, cg, cb;
	double px = PAD + x * r->scale, w = value * r->scale;
	double y = r->base_y - depth * FRAME_H, chars = (w - 6) / CHAR_W;
	double share = r->total ? 100.0 * (double)value / (double)r->total : 0;

	if (bk == BOX_MERGED)
		snprintf(label, sizeof(label), "(%u frame%s)", nmerged, nmerged == 1 ? "" : "s");
	else if (bk == BOX_TRUNC)
		snprintf(label, sizeof(label), "(truncated)");
	else if (node == 0)
		snprintf(label, sizeof(label), "all");
	else {
		name = flame_str(t, t->nodes[node].name);
		kind = t->names[t->nodes[node].name].kind;
		note = kind_note(kind);
	}
	len = strlen(name);
	bufout_puts(o, "<g><title>");
	svg_text(o, name, len, SIZE_MAX);
	bufout_printf(o, "%s (%" PRIu64 " %s, %.2f%%)</title>", note, value, r->unit, share);
	if (bk == BOX_MERGED)
		fill = "fill=\"rgb(235,235,235)\" stroke=\"rgb(150,150,150)\" stroke-dasharray=\"2\"";
	else if (bk == BOX_TRUNC)
		fill = "fill=\"rgb(255,255,255)\" stroke=\"rgb(220,0,0)\"";
	if (fill)
		bufout_printf(o, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" %s/>",
			      px, y, w, FRAME_H - 1, fill);
	else {
		colour(name, kind, &cr, &cg, &cb);
		bufout_printf(o, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" "
			      "fill=\"rgb(%d,%d,%d)\" rx=\"2\"/>", px, y, w, FRAME_H - 1, cr, cg,
			      cb);
	}
	if (chars >= 3) {
		bufout_printf(o, "<text x=\"%.2f\" y=\"%.1f\">", px + 3, y + 11.5);
		svg_text(o, name, len, (size_t)chars);
		bufout_puts(o, "</text>");
	}
	bufout_puts(o, "</g>\n");
}

/* Counts the box against the cap and draws it in the writing pass; 0 once capped. */
static int
box(struct render *r, enum box_kind bk, uint32_t node, uint64_t value, uint64_t x,
    uint32_t depth, uint32_t nmerged)
{
	if (r->nboxes >= FLAME_MAX_NODES) {
		r->capped = 1;
		return 0;
	}
	r->nboxes++;
	if (depth > r->maxdepth)
		r->maxdepth = depth;
	if (r->out)
		write_box(r, bk, node, value, x, depth, nmerged);
	return 1;
}

static int
narrow(const struct render *r, uint64_t value)
{
	return (double)value * 1000 < (double)r->total * NARROW_PER_MILLE;
}

/* Draws it and queues its wide children, in name order; narrow ones become one box. */
static void
visit(struct render *r, struct item it)
{
	const struct flame_node *n = &r->t->nodes[it.node];
	uint64_t acc = it.x, merged = 0;
	uint32_t i, nmerged = 0;
	size_t first = r->nstack;

	if (!box(r, BOX_NODE, it.node, n->value, it.x, it.depth, 0))
		return;
	for (i = 0; i < n->nchild; i++) {
		uint32_t c = r->t->order[n->first + i];
		uint64_t v = r->t->nodes[c].value;

		if (narrow(r, v)) {
			nmerged++;
			merged += v;
			continue;
		}
		r->stack[r->nstack++] = (struct item){ c, it.depth + 1, acc };
		acc += v;
	}
	/* Reverse the queued children so they pop, and are drawn, in name order. */
	for (size_t a = first, b = r->nstack; a + 1 < b; a++, b--) {
		struct item tmp = r->stack[a];

		r->stack[a] = r->stack[b - 1];
		r->stack[b - 1] = tmp;
	}
	if (nmerged && box(r, BOX_MERGED, 0, merged, acc, it.depth + 1, nmerged))
		acc += merged;
	if (n->trunc)
		box(r, BOX_TRUNC, 0, n->trunc, acc, it.depth + 1, 0);
}

static void
walk(struct render *r)
{
	r->nstack = 0;
	r->nboxes = 0;
	r->maxdepth = 0;
	r->capped = 0;
	r->stack[r->nstack++] = (struct item){ 0, 0, 0 };
	while (r->nstack)
		visit(r, r->stack[--r->nstack]);
}

static void
write_head(struct render *r, const struct svg_head *h, int height)
{
	struct bufout *o = r->out;
	const struct flame *t = r->t;

	bufout_printf(o, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		      "<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		      "xmlns=\"http://www.w3.org/2000/svg\">\n", WIDTH, height, WIDTH, height);
	bufout_puts(o, "<style>text{font-family:Verdana,sans-serif;font-size:12px;fill:#000}"
		    ".h{font-size:17px;font-weight:bold}.s{fill:#333}.t{fill:#c00}</style>\n");
	bufout_printf(o, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" "
		      "fill=\"rgb(248,248,240)\"/>\n", WIDTH, height);
	bufout_printf(o, "<text class=\"h\" x=\"%d\" y=\"26\" text-anchor=\"middle\">",
		      WIDTH / 2);
	svg_text(o, h->title, strlen(h->title), SIZE_MAX);
	bufout_printf(o, "</text>\n<text class=\"s\" x=\"%d\" y=\"46\" text-anchor=\"middle\">",
		      WIDTH / 2);
	svg_text(o, h->subtitle, strlen(h->subtitle), SIZE_MAX);
	bufout_puts(o, "</text>\n");
	if (!t->trunc_stacks && !r->capped)
		return;
	bufout_printf(o, "<text class=\"t\" x=\"%d\" y=\"64\" text-anchor=\"middle\">"
		      "truncated: the %d-frame rendering cap was reached; ", WIDTH / 2,
		      FLAME_MAX_NODES);
	if (t->trunc_stacks)
		bufout_printf(o, "%" PRIu64 " stacks (%.2f%% of the total) lost their deeper "
			      "frames, ", t->trunc_stacks,
			      r->total ? 100.0 * (double)t->trunc_value / (double)r->total : 0.0);
	bufout_puts(o, "shown as (truncated) boxes</text>\n");
}

int
svg_write(const struct flame *t, const struct svg_head *h, struct bufout *out)
{
	struct render r = { .t = t, .total = t->nodes[0].value, .unit = h->unit };
	int height;

	/* Every queued item is a distinct node, so the queue never outgrows the tree. */
	if (!(r.stack = malloc((t->nnodes + 1) * sizeof(*r.stack))))
		return -1;
	r.scale = r.total ? (double)(WIDTH - 2 * PAD) / (double)r.total : 0;
	walk(&r);                       /* measure */
	height = HEAD_H + (int)(r.maxdepth + 1) * FRAME_H + PAD;
	r.base_y = height - PAD - FRAME_H;
	r.out = out;
	write_head(&r, h, height);
	walk(&r);                       /* draw */
	bufout_puts(out, "</svg>\n");
	free(r.stack);
	return 0;
}
