#include "ksymtab.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"

#define LAST_SPAN 4096          /* the last symbol of a table covers at most this much */
#define HEX_MAX 16              /* digits of a 64-bit address */

int
ksymtab_reserve(struct ksymtab *t, size_t n)
{
	return grow_array((void **)&t->v, &t->cap, t->n, n, sizeof(*t->v));
}

static int
is_sep(int c)
{
	return c == ' ' || c == '\t';
}

/* Whether c ends a token: a separator, the newline or the NUL that ends every line. */
static inline int
ends_token(unsigned char c)
{
	return c <= ' ' && (c == ' ' || c == '\t' || c == '\n' || c == 0);
}

/* The next token of the line [*p, end): its start, with its length in *len; NULL when the
 * line has no more.  *end is the line's newline or the text's closing NUL, which stops
 * every scan: no bound check per byte (a kernel's table has 200,000 lines). */
static char *
token(char **p, char *end, size_t *len)
{
	char *s = *p;
	while (is_sep(*s))
		s++;
	if (s == end || *s == '\n' || *s == 0)
		return NULL;
	char *e = s + 1;
	while (!ends_token((unsigned char)*e))
		e++;
	*len = (size_t)(e - s);
	*p = e;
	return s;
}

static int
hex_digit(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* "ffffffff81000000 T _text" or "ffffffffc0a01000 t fn\t[mod]" into *out: 1 for a text
 * symbol, 0 for any other line.  The name and module are ended in place: every cut is at a
 * separator, a newline, a NUL or the spare byte at end, none of which another token needs. */
static int
parse_line(char *line, char *end, struct ksym *out)
{
	char *p = line;
	size_t la, lt, ln, lm = 0;
	char *a = token(&p, end, &la), *t = a ? token(&p, end, &lt) : NULL;
	/* Most lines are data symbols: they go before their name is looked at. */
	if (!t || la > HEX_MAX || lt != 1 || !strchr("tTwW", t[0]))
		return 0;
	char *name = token(&p, end, &ln), *mod = name ? token(&p, end, &lm) : NULL;
	if (!name)
		return 0;
	uint64_t addr = 0;
	for (size_t i = 0; i < la; i++) {
		int d = hex_digit(a[i]);
		if (d < 0)
			return 0;
		addr = addr << 4 | (uint64_t)d;
	}
	char *mod_end = NULL;
	if (mod && mod[0] == '[') {
		char *close = memchr(mod + 1, ']', lm - 1);
		mod_end = close ? close : mod + lm;
		mod++;
	} else if (mod) {
		mod_end = mod + lm;
	}
	name[ln] = 0;
	if (mod_end)
		*mod_end = 0;
	*out = (struct ksym){ .start = addr, .name = name, .module = mod ? mod : "" };
	return 1;
}

static int
by_start_then_line(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	/* end holds the line number until ends are set: the file's first name wins. */
	return x->end < y->end ? -1 : x->end > y->end;
}

/* Sorted (when not already), the first entry of each start kept. */
static void
order(struct ksymtab *t)
{
	int sorted = 1;
	for (size_t i = 1; i < t->n && sorted; i++)
		sorted = t->v[i - 1].start <= t->v[i].start;
	if (!sorted)
		qsort(t->v, t->n, sizeof(*t->v), by_start_then_line);
	size_t w = 0;
	for (size_t i = 0; i < t->n; i++)
		if (w == 0 || t->v[w - 1].start != t->v[i].start)
			t->v[w++] = t->v[i];
	t->n = w;
}

int
ksymtab_parse(struct ksymtab *t, char *text, size_t len, size_t *zeros)
{
	char *end = text + len;
	text[len] = 0;
	for (char *p = text; p < end;) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char *next = nl ? nl + 1 : end;
		struct ksym s;
		if (parse_line(p, nl ? nl : end, &s)) {
			if (s.start == 0) {
				if (zeros)
					++*zeros;
			} else {
				if (ksymtab_reserve(t, 1) < 0)
					return -1;
				s.end = t->n;
				t->v[t->n++] = s;
			}
		}
		p = next;
	}
	order(t);
	for (size_t i = 0; i < t->n; i++)
		t->v[i].end = i + 1 < t->n ? t->v[i + 1].start : t->v[i].start + LAST_SPAN;
	return 0;
}

static int
by_start(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

void
ksymtab_sort(struct ksymtab *t)
{
	if (t->n > 1)
		qsort(t->v, t->n, sizeof(*t->v), by_start);
}

struct ksym *
ksymtab_find(const struct ksymtab *t, uint64_t ip, size_t *at)
{
	size_t lo = 0, hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->v[mid].start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (at)
		*at = lo;
	if (lo == 0)
		return NULL;
	struct ksym *s = &t->v[lo - 1];
	return ip < s->end || s->end == s->start ? s : NULL;
}

void
ksymtab_clear(struct ksymtab *t)
{
	free(t->v);
	t->v = NULL;
	t->n = t->cap = 0;
}
