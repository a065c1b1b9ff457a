/*
 * Writes a window's processed profile (format version FX_VERSION) as JSON text.  With a
 * jslb, the columns that version allows as typed arrays go into slabs and the text holds
 * {"$s":N} in their place; the same code writes both, and a placeholder decodes to exactly
 * the array text it replaced, so a decoded jslb file equals the JSON file byte for byte.
 */
#ifndef EF_FXWRITE_H
#define EF_FXWRITE_H

#include <stdint.h>
#include <stdio.h>

#include "fxmodel.h"
#include "jslb.h"
#include "timeline.h"

/* The newest version the deployed Firefox Profiler (production branch) knows: a newer one is
 * refused.  Versions 67-69 change nothing in the JSON layout of 66 (samply's); they allow
 * more typed-array columns in jslb files, which is why this is not 66. */
#define FX_VERSION 69

struct fxmeta {
	uint64_t start, end;            /* window, event clock */
	int64_t clock_offset_ns;        /* unix = event + offset */
	int monotonic;                  /* the event clock is CLOCK_MONOTONIC */
	uint32_t cpu_frequency;         /* Hz, 0 when unknown */
	const char *product;            /* shown as the profile name */
	const char *arch;               /* "x86_64", "aarch64" or NULL */
	/* Names, valid while defs is unchanged: */
	const struct defs *defs;
};

/* Writes the document to f (and slabs, when not NULL): 0, or -1 with a reason in err. */
int fxwrite(FILE *f, struct jslb *slabs, const struct fxmodel *m, const struct timeline *t,
	    const struct fxmeta *meta, char *err, size_t errlen);

#endif
