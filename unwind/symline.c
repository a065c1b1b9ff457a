/* symline: line table rows of every CU merged into one sorted array (see symdwarf.h). */
#include "symdwarf.h"

#include <stdlib.h>
#include <string.h>

/* Addresses a linker gives code it discarded (COMDAT duplicates, --gc-sections): 0 from
 * older linkers, -1/-2 as DWARF 5 tombstones.  Such sequences would shadow real code. */
static int discarded(uint64_t addr)
{
	return addr == 0 || addr >= UINT64_MAX - 1;
}

/* Maps a CU's file table entry to an index into idx->files, interning its name. */
static uint32_t line_file(struct dwindex *idx, Dwarf_Line *l, struct strpool *pool,
			  uint32_t **cumap, size_t *ncumap)
{
	Dwarf_Files *files;
	size_t fi;
	const char *name;

	if (dwarf_line_file(l, &files, &fi) != 0 || fi >= (1u << 20))
		return 0;	/* index 0 is the "??" placeholder */
	if (fi >= *ncumap) {
		size_t n = fi + 16;
		uint32_t *m = realloc(*cumap, n * sizeof(*m));
		if (!m)
			return 0;
		memset(m + *ncumap, 0, (n - *ncumap) * sizeof(*m));
		*cumap = m;
		*ncumap = n;
	}
	if ((*cumap)[fi])
		return (*cumap)[fi];
	if (!(name = dwarf_filesrc(files, fi, NULL, NULL)) ||
	    dwindex_grow((void **)&idx->files, &idx->cfiles, idx->nfiles + 1, sizeof(char *)) < 0)
		return 0;
	if (!(idx->files[idx->nfiles] = strpool_cstr(pool, name)))
		return 0;
	return (*cumap)[fi] = (uint32_t)idx->nfiles++;
}

int dwindex_add_lines(struct dwindex *idx, Dwarf_Die *cudie, uint32_t cu, struct strpool *pool)
{
	Dwarf_Lines *lines;
	size_t n;
	uint32_t *cumap = NULL;
	size_t ncumap = 0;
	int skip = 0, seq_start = 1;

	if (dwarf_getsrclines(cudie, &lines, &n) != 0 || n == 0)
		return 0;	/* a CU without a line table is not an error */
	if (idx->nfiles == 0) {
		if (dwindex_grow((void **)&idx->files, &idx->cfiles, 1, sizeof(char *)) < 0)
			return -1;
		idx->files[idx->nfiles++] = "??";
	}
	if (dwindex_grow((void **)&idx->lines, &idx->clines, idx->nlines + n,
			 sizeof(*idx->lines)) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		Dwarf_Addr a;
		int lineno = 0;
		bool end = false;

		if (!l || dwarf_lineaddr(l, &a) != 0)
			continue;
		dwarf_lineno(l, &lineno);
		dwarf_lineendsequence(l, &end);
		if (seq_start)
			skip = discarded(a);
		seq_start = end;
		if (skip)
			continue;
		struct dwline *d = &idx->lines[idx->nlines++];
		d->addr = a;
		d->file = end ? DWLINE_END : line_file(idx, l, pool, &cumap, &ncumap);
		d->line = lineno > 0 ? (uint32_t)lineno : 0;
		d->cu = cu;
	}
	free(cumap);
	return 0;
}

struct keyed_line {
	struct dwline l;
	size_t ord;
};

/* By address; at one address an end_sequence row first (the sequence that ends there must
 * not win over the one that starts there), then in table order (units in .debug_info order,
 * rows in their order), so the lookup's "last row at or below addr" picks the last row the
 * compiler emitted for that address. */
static int line_cmp(const struct dwline *x, const struct dwline *y)
{
	int xe = x->file == DWLINE_END, ye = y->file == DWLINE_END;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (xe != ye)
		return ye - xe;
	return x->cu < y->cu ? -1 : x->cu > y->cu;
}

static int keyed_cmp(const void *a, const void *b)
{
	const struct keyed_line *x = a, *y = b;
	int c = line_cmp(&x->l, &y->l);

	if (c)
		return c;
	return x->ord < y->ord ? -1 : x->ord > y->ord;
}

int dwindex_sort_lines(struct dwindex *idx, size_t from)
{
	size_t n = idx->nlines - from;
	struct keyed_line *k;
	struct dwline *rows = idx->lines;

	if (n == 0 || idx->nlines < 2)
		return 0;
	if (!(k = malloc(n * sizeof(*k))))
		return -1;
	for (size_t i = 0; i < n; i++) {
		k[i].l = idx->lines[from + i];
		k[i].ord = i;
	}
	qsort(k, n, sizeof(*k), keyed_cmp);
	if (from == 0) {
		for (size_t i = 0; i < n; i++)
			idx->lines[i] = k[i].l;
		free(k);
		return 0;
	}
	/* The rows already indexed are sorted: merge from the back, in place (the new rows
	 * are in k), a row of an earlier unit first; a second array of every row would double
	 * the peak and leave a hole that size in the heap at each unit. */
	size_t i = from, j = n, o = from + n;
	while (j > 0) {
		if (i > 0 && line_cmp(&rows[i - 1], &k[j - 1].l) > 0)
			rows[--o] = rows[--i];
		else
			rows[--o] = k[--j].l;
	}
	free(k);
	return 0;
}

int dwindex_line(const struct dwindex *idx, uint64_t addr, const char **file, uint32_t *line,
		 uint64_t *row_addr)
{
	int64_t i = addrix_floor(&idx->xlines, idx->lines, idx->nlines, sizeof(*idx->lines), addr);

	if (i < 0)
		return -1;
	const struct dwline *l = &idx->lines[i];
	if (l->file == DWLINE_END || l->file >= idx->nfiles)
		return -1;
	*file = idx->files[l->file];
	*line = l->line;
	*row_addr = l->addr;
	return 0;
}
