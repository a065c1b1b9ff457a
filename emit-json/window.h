/*
 * One profile of a window as a JSON document (docs/json-windows.schema.json): the window,
 * its sample types, and each stack with its frames root to leaf (named as in every derived
 * output, lib/winmodel.h), labels and values; heap stacks add signed in-use deltas against
 * the previous window, and the stacks that window had and this one has not.
 */
#ifndef RP_EMIT_JSON_WINDOW_H
#define RP_EMIT_JSON_WINDOW_H

#include <stdio.h>

#include "delta.h"
#include "emitter.h"
#include "json.h"

struct jwin {
	struct json j;
	struct delta delta;
	struct wframe frames[WINMODEL_MAX_FRAMES];
	int pretty;
};

/* Writes profile p of the window e ends to f.  0, or -1 (the reason in w->j.err or
 * w->delta.err). */
int jwin_write(struct jwin *w, struct emitter *e, const struct emitter_profile *p, FILE *f);

#endif
