#include "fold.h"
#include "grow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
fold_init(struct fold *f)
{
	memset(f, 0, offsetof(struct fold, frames));
}

void
fold_release(struct fold *f)
{
	free(f->text);
	free(f->lines);
	f->text = NULL;
	f->lines = NULL;
	f->ntext = f->cap_text = f->nlines = f->cap_lines = 0;
}

/* Appends one cleaned name to text (room was reserved by the caller). */
static void
put_name(struct fold *f, const struct wframe *fr)
{
	char *o = f->text + f->ntext;
	uint32_t i;

	for (i = 0; i < fr->len; i++) {
		unsigned char c = (unsigned char)fr->name[i];

		o[i] = c == ';' ? ':' : c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	f->ntext += fr->len;
	if (f->annotate && fr->kind == WF_KERNEL) {
		memcpy(f->text + f->ntext, "_[k]", 4);
		f->ntext += 4;
	}
}

static int
fold_stack(struct fold *f, struct winmodel *w, const struct wset *set, const struct wstack *s)
{
	size_t n = winmodel_frames(w, set, s, f->frames), need = n, i, start = f->ntext;

	for (i = 0; i < n; i++)
		need += f->frames[i].len + 4;
	if (grow_array((void **)&f->text, &f->cap_text, f->ntext, need, 1) < 0 ||
	    grow_array((void **)&f->lines, &f->cap_lines, f->nlines, 1, sizeof(*f->lines)) < 0) {
		snprintf(f->err, sizeof(f->err), "out of memory");
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (i)
			f->text[f->ntext++] = ';';
		put_name(f, &f->frames[i]);
	}
	f->lines[f->nlines++] = (struct fold_line){ start, (uint32_t)(f->ntext - start),
						    f->samples ? s->count : s->nanos };
	return 0;
}

int
fold_window(struct fold *f, struct winmodel *w, const struct wset *set)
{
	size_t i;

	f->ntext = f->nlines = 0;
	for (i = 0; i < set->nstacks; i++)
		if (fold_stack(f, w, set, &set->stacks[i]) < 0)
			return -1;
	return 0;
}

static const char *sort_text;   /* qsort has no context argument */

/* Bytewise order of the stack text, a prefix first, as `LC_ALL=C sort` orders the lines
 * up to their value. */
static int
cmp_line(const void *a, const void *b)
{
	const struct fold_line *x = a, *y = b;
	uint32_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(sort_text + x->off, sort_text + y->off, n);

	if (c)
		return c;
	return (x->len > y->len) - (x->len < y->len);
}

void
fold_write(struct fold *f, struct bufout *out)
{
	size_t i, j;
	uint64_t v;

	sort_text = f->text;
	if (f->nlines)
		qsort(f->lines, f->nlines, sizeof(*f->lines), cmp_line);
	for (i = 0; i < f->nlines; i = j) {
		v = 0;
		for (j = i; j < f->nlines && cmp_line(&f->lines[i], &f->lines[j]) == 0; j++)
			v += f->lines[j].value;
		bufout_put(out, f->text + f->lines[i].off, f->lines[i].len);
		bufout_printf(out, " %llu\n", (unsigned long long)v);
	}
}
