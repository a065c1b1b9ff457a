/*
 * Draws a flame graph tree (flame.h) as a self-contained static SVG: no scripts, one
 * <rect> with a <title> ("label (value unit, share%)") per frame, widths proportional to
 * value, the bottom "all" bar under the process names.  Colours tell kernel frames
 * (blue-green), user frames (warm) and unsymbolized frames (grey) apart.  Children narrower
 * than 0.1% of the total are drawn as one "(n frames)" box; at most FLAME_MAX_NODES boxes
 * are drawn, and a graph cut by that cap or by the tree's cap says so in red under its
 * heading ("truncated: ...").
 *
 * The text is written piece by piece into a bufout, in two passes over the tree: the first
 * only measures (depth, box count), so the whole SVG is never held in memory.
 */
#ifndef ES_SVG_H
#define ES_SVG_H

#include "bufout.h"
#include "flame.h"

struct svg_head {
	const char *title;      /* "CPU flame graph" */
	const char *subtitle;   /* profile kind, time range, total */
	const char *unit;       /* of the values in titles: "ns", "samples" */
};

/* Writes the SVG of t (sorted with flame_sort) to out; write errors are reported by
 * bufout_flush.  0, or -1 when out of memory. */
int svg_write(const struct flame *t, const struct svg_head *h, struct bufout *out);

/* Writes s[0..len) as XML character data: markup characters escaped, invalid UTF-8 and
 * control characters as '?', cut to at most maxchars characters with ".." when longer. */
void svg_text(struct bufout *out, const char *s, size_t len, size_t maxchars);

#endif
