/*
 * Folded stacks of one window, as FlameGraph's flamegraph.pl and speedscope read them:
 * one line "root;frame;...;leaf value" per distinct stack, lines sorted bytewise, identical
 * stacks merged by adding their values.  Names are cleaned so a line stays one record:
 * ';' becomes ':', and line breaks and other control characters become '?'.
 */
#ifndef EC_FOLD_H
#define EC_FOLD_H

#include <stddef.h>
#include <stdint.h>

#include "bufout.h"
#include "winmodel.h"

struct fold_line {
	size_t off;             /* the stack text in fold.text */
	uint32_t len;
	uint64_t value;
};

struct fold {
	int annotate;           /* append "_[k]" to kernel frames */
	int samples;            /* values are sample counts instead of CPU nanoseconds */
	char *text;
	size_t ntext, cap_text;
	struct fold_line *lines;
	size_t nlines, cap_lines;
	struct wframe frames[WINMODEL_MAX_FRAMES];
	char err[200];
};

void fold_init(struct fold *f);
void fold_release(struct fold *f);
/* Folds every stack of set of the window in w (dropping the previous window's lines).
 * 0, or -1 with f->err when out of memory. */
int fold_window(struct fold *f, struct winmodel *w, const struct wset *set);
/* Writes the sorted, merged lines. */
void fold_write(struct fold *f, struct bufout *out);

#endif
