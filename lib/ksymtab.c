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

/* Whether c ends a token: a separator, the newline or the NUL that ends every line. */
static inline int
ends_token(unsigned char c)
{
	return c <= ' ' && (c == ' ' || c == '\t' || c == '\n' || c == 0);
}

/* The line's newline or the text's closing NUL stops every scan: no bound check per byte
 * (a kernel's table has 200,000 lines). */
static char *
skip_sep(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* Names are long: eight bytes at a time while none is a control byte or a space, then
 * byte by byte.  end is the text's closing NUL, past which nothing is read. */
static char *
token_end(char *s, const char *end)
{
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	for (uint64_t x; end - s >= 8; s += 8) {
		memcpy(&x, s, 8);
		if ((x - ones * 0x21) & ~x & highs)
			break; /* a byte below '!' */
	}
	while (!ends_token((unsigned char)*s))
		s++;
	return s;
}

/* Each hex digit's value plus one, 0 for any other byte: one lookup per digit. */
#define D(c, v) [c] = (v) + 1
static const unsigned char hex_value[256] = {
	D('0', 0), D('1', 1), D('2', 2), D('3', 3), D('4', 4), D('5', 5), D('6', 6),
	D('7', 7), D('8', 8), D('9', 9), D('a', 10), D('b', 11), D('c', 12), D('d', 13),
	D('e', 14), D('f', 15), D('A', 10), D('B', 11), D('C', 12), D('D', 13), D('E', 14),
	D('F', 15),
};
#undef D

/* Bytes of x (each below 0x80) from lo to hi: 0x80 in each such byte, else 0. */
static inline uint64_t
bytes_in(uint64_t x, unsigned lo, unsigned hi)
{
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	return (x + ones * (0x80 - lo)) & ~(x + ones * (0x7f - hi)) & highs;
}

/* Eight lower-case hex digits in the order of the text: their value, or -1 when one is
 * not such a digit.  A kernel prints its addresses so: one word instead of eight digits
 * at a time. */
static inline int64_t
hex8(const char *s)
{
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	uint64_t x;
	memcpy(&x, s, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	x = __builtin_bswap64(x);
#endif
	uint64_t letter = bytes_in(x, 'a', 'f');
	if ((x & highs) || (bytes_in(x, '0', '9') | letter) != highs)
		return -1;
	/* each byte's digit, '0'-'9' and 'a'-'f' alike: its low nibble, plus 9 for a letter */
	uint64_t v = (x & ones * 0x0f) + (letter >> 7) * 9;
	/* first digit in the lowest byte: pairs, then quads, then the eight into 32 bits */
	v = ((v & 0x000f000f000f000full) << 4) | ((v & 0x0f000f000f000f00ull) >> 8);
	v = ((v & 0x000000ff000000ffull) << 8) | ((v & 0x00ff000000ff0000ull) >> 16);
	return (int64_t)(((v & 0xffff) << 16) | ((v >> 32) & 0xffff));
}

/* The address token at *p (after separators): 1 when it is 1 to HEX_MAX hex digits, with
 * *p moved past it. */
static int
address(char **p, const char *end, uint64_t *addr)
{
	char *s = skip_sep(*p);
	uint64_t a = 0;
	size_t n = 0;
	int64_t hi, lo;
	/* a 64-bit kernel's sixteen digits, two words at a time; anything else by the table */
	if (end - s >= HEX_MAX && (hi = hex8(s)) >= 0 && (lo = hex8(s + 8)) >= 0) {
		a = (uint64_t)hi << 32 | (uint64_t)lo;
		n = HEX_MAX;
	}
	if (n == 0 || !ends_token((unsigned char)s[n]))
		for (a = 0, n = 0; n <= HEX_MAX && hex_value[(unsigned char)s[n]]; n++)
			a = a << 4 | (hex_value[(unsigned char)s[n]] - 1u);
	if (n == 0 || n > HEX_MAX || !ends_token((unsigned char)s[n]))
		return 0;
	*addr = a;
	*p = s + n;
	return 1;
}

/* "ffffffff81000000 T _text" or "ffffffffc0a01000 t fn\t[mod]" into *out: 1 for a text
 * symbol, 0 for any other line.  The name and module are ended in place: every cut is at a
 * separator, a newline, a NUL or the spare byte at end, none of which another token needs.
 * The line ends at its newline or the text's NUL, which every scan stops at. */
static int
parse_line(char *line, char *end, char **next, struct ksym *out)
{
	char *p = line;
	uint64_t addr;
	if (!address(&p, end, &addr))
		return 0;
	/* Most lines of a full table are text symbols, but data symbols go before their name
	 * is looked at. */
	p = skip_sep(p);
	if (!(p[0] == 't' || p[0] == 'T' || p[0] == 'w' || p[0] == 'W') ||
	    !ends_token((unsigned char)p[1]))
		return 0;
	char *name = skip_sep(p + 1);
	if (*name == '\n' || *name == 0)
		return 0;
	char *name_end = token_end(name + 1, end), *mod = skip_sep(name_end), *mod_end = NULL;
	char *rest = mod;
	if (*mod == '\n' || *mod == 0) {
		mod = NULL;
	} else {
		mod_end = token_end(mod + 1, end);
		rest = skip_sep(mod_end);
		if (mod[0] == '[') {
			char *close = memchr(mod + 1, ']', (size_t)(mod_end - mod - 1));
			mod_end = close ? close : mod_end;
			mod++;
		}
	}
	/* The line is read to its newline, as a rule, before the cuts hide it. */
	*next = *rest == '\n' ? rest + 1 : rest == end ? rest : NULL;
	*name_end = 0;
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
	for (char *p = text, *next; p < end; p = next) {
		struct ksym s;
		next = NULL;
		int text_sym = parse_line(p, end, &next, &s);
		if (!next) {
			char *nl = memchr(p, '\n', (size_t)(end - p));
			next = nl ? nl + 1 : end;
		}
		if (text_sym) {
			if (s.start == 0) {
				if (zeros)
					++*zeros;
			} else {
				if (t->n == t->cap && ksymtab_reserve(t, 1) < 0)
					return -1;
				s.end = t->n;
				t->v[t->n++] = s;
			}
		}
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
