/* Kernel symbols: the kernel's lookup of each address met, else the /proc/kallsyms table. */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ksymbpf.h"
#include "ksyms.h"

#define FIRST_READ 4096         /* enough for the first line, which tells hidden addresses */
#define READ_CHUNK (1 << 20)    /* kallsyms costs per read call as much as per byte */

static int
grow(void **v, size_t *cap, size_t need, size_t esz, size_t first)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap : first;
	while (c < need)
		c *= 2;
	void *p = realloc(*v, c * esz);
	if (!p)
		return -1;
	*v = p;
	*cap = c;
	return 0;
}

/* Appends up to want bytes of the file to k->text; 0 at its end, -1 on error. */
static ssize_t
read_more(struct ksyms *k, size_t want)
{
	if (grow((void **)&k->text, &k->textcap, k->len + want + 1, 1, READ_CHUNK) < 0)
		return -1;
	ssize_t r;
	do
		r = read(k->fd, k->text + k->len, want);
	while (r < 0 && errno == EINTR);
	if (r > 0)
		k->len += (size_t)r;
	return r;
}

static int
is_hex(int c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int
hex_value(int c)
{
	return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

static int
is_sep(int c)
{
	return c == ' ' || c == '\t';
}

/* The next token of the line [*p, end): its start and length; the line's content ends at
 * a newline or a NUL.  NULL when the line has no more. */
static char *
token(char **p, char *end, size_t *len)
{
	char *s = *p;
	while (s < end && is_sep(*s))
		s++;
	if (s == end || *s == '\n' || *s == 0)
		return NULL;
	char *t = s;
	while (t < end && !is_sep(*t) && *t != '\n' && *t != 0)
		t++;
	*len = (size_t)(t - s);
	*p = t;
	return s;
}

/* One line, "ffffffff81000000 T _text" or "ffffffffc0a01000 t foo\t[mod]": its symbol
 * when it is a text one, its name and module ended in place.  Returns where the next line
 * starts. */
static char *
parse_line(char *p, char *end, struct ksym *out, int *ok)
{
	char *line = p, *cut[2] = { NULL, NULL };
	size_t la, lt, ln, lm = 0;
	char *a = token(&p, end, &la), *t = a ? token(&p, end, &lt) : NULL;
	char *name = t ? token(&p, end, &ln) : NULL, *mod = name ? token(&p, end, &lm) : NULL;
	char *next = memchr(line, '\n', (size_t)(end - line));
	next = next ? next + 1 : end;
	*ok = 0;
	if (!name || lt != 1 || !strchr("tTwW", t[0]))
		return next;
	uint64_t addr = 0;
	for (size_t i = 0; i < la && is_hex(a[i]); i++)
		addr = addr << 4 | (uint64_t)hex_value(a[i]);
	if (addr == 0)
		return next;
	cut[0] = name + ln;
	if (mod && mod[0] == '[') {
		mod++;
		lm--;
		char *close = memchr(mod, ']', lm);
		cut[1] = close ? close : mod + lm;
	} else if (mod) {
		cut[1] = mod + lm;
	}
	/* Every cut is at a separator, a newline, a NUL or end, which is the buffer's spare
	 * byte: none is a byte another token still needs. */
	*cut[0] = 0;
	if (cut[1])
		*cut[1] = 0;
	*out = (struct ksym){ .start = addr, .name = name, .module = mod ? mod : "" };
	*ok = 1;
	return next;
}

static int
ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	/* end holds the line number until ends are set: the file's first name wins. */
	return x->end < y->end ? -1 : x->end > y->end;
}

/* k->text[0, k->len) into the table: sorted (kallsyms is, but for modules and BPF
 * programs after the kernel's own symbols), the first name of each address, each ending
 * where the next starts (the last, having none, gets one page). */
static int
build_table(struct ksyms *k)
{
	char *p = k->text, *end = k->text + k->len;
	int sorted = 1;
	k->text[k->len] = 0;
	k->n = 0;
	while (p < end) {
		struct ksym s;
		int ok;
		p = parse_line(p, end, &s, &ok);
		if (!ok)
			continue;
		if (grow((void **)&k->v, &k->cap, k->n + 1, sizeof(*k->v), 1 << 14) < 0)
			return -1;
		s.end = k->n;
		sorted &= k->n == 0 || k->v[k->n - 1].start <= s.start;
		k->v[k->n++] = s;
	}
	if (!sorted)
		qsort(k->v, k->n, sizeof(*k->v), ksym_cmp);
	size_t j = 0;
	for (size_t i = 0; i < k->n; i++)
		if (j == 0 || k->v[j - 1].start != k->v[i].start)
			k->v[j++] = k->v[i];
	k->n = j;
	for (size_t i = 0; i < k->n; i++)
		k->v[i].end = i + 1 < k->n ? k->v[i + 1].start : k->v[i].start + 4096;
	return 0;
}

/* Reads the rest of the file and replaces what lookups found by its table, keeping which
 * symbols were sent. */
static int
load_rest(struct ksyms *k)
{
	ssize_t r;
	while ((r = read_more(k, READ_CHUNK)) > 0)
		;
	close(k->fd);
	k->fd = -1;
	struct ksym *found = k->v;
	size_t nfound = k->n;
	k->v = NULL;
	k->n = k->cap = 0;
	k->loaded = 1;
	if (r < 0 || build_table(k) < 0) {
		int e = r < 0 ? errno : ENOMEM;
		free(k->v);
		k->v = found;	/* what was found stays, the rest is unnamed */
		k->n = k->cap = nfound;
		k->loaded = 0;
		errno = e;
		return -1;
	}
	for (size_t i = 0, j = 0; i < nfound; i++) {
		while (j < k->n && k->v[j].start < found[i].start)
			j++;
		if (j < k->n && k->v[j].start == found[i].start)
			k->v[j].sent |= found[i].sent;
		free(found[i].name);
	}
	free(found);
	return 0;
}

static int
open_file(struct ksyms *k, const char *path)
{
	memset(k, 0, sizeof(*k));
	if ((k->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	if (read_more(k, FIRST_READ) < 0 || !k->text) {
		int e = k->text ? errno : ENOMEM;
		close(k->fd);
		k->fd = -1;
		free(k->text);
		k->text = NULL;
		errno = e;
		return -1;
	}
	/* Addresses show as zeros when kptr_restrict hides them: then nothing gets a name. */
	char *p = k->text, *end = k->text + k->len;
	while (p < end && *p == '0')
		p++;
	k->hidden = p > k->text && p < end && !is_hex(*p);
	return 0;
}

int
ksyms_load(struct ksyms *k, const char *path)
{
	if (open_file(k, path) < 0)
		return -1;
	if (load_rest(k) < 0) {
		int e = errno;
		ksyms_free(k);
		errno = e;
		return -1;
	}
	return 0;
}

int
ksyms_open(struct ksyms *k, const char *path, int verbose)
{
	if (open_file(k, path) < 0)
		return -1;
	k->verbose = verbose;
	if (!k->hidden)
		k->live = ksymbpf_open(verbose, k->why, sizeof(k->why));
	return 0;
}

const char *
ksyms_how(const struct ksyms *k)
{
	if (k->hidden)
		return "none: the file shows no addresses";
	return k->live ? "eBPF lookup, the whole file when it cannot tell" : k->why;
}

static struct ksym *
table_find(struct ksyms *k, uint64_t ip, size_t *at)
{
	size_t lo = 0, hi = k->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (k->v[mid].start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	*at = lo;
	if (lo == 0)
		return NULL;
	struct ksym *s = &k->v[lo - 1];
	return ip < s->end ? s : NULL;
}

/* The kernel's answer for ip, added to the symbols found; NULL when kallsyms must tell: no
 * answer, or one without a module that may be the kernel's own or a BPF image's (module
 * "bpf" in kallsyms) when the bounds of the kernel's code are unknown and its name starts
 * with "bpf_". */
static struct ksym *
live_find(struct ksyms *k, uint64_t ip, size_t at)
{
	static struct ksymbpf_answer a;
	if (ksymbpf_lookup(k->live, ip, &a) != 1)
		return NULL;
	if (!a.module[0] && a.kernel_text == 0)
		snprintf(a.module, sizeof(a.module), "bpf");
	else if (!a.module[0] && a.kernel_text < 0 && strncmp(a.name, "bpf_", 4) == 0)
		return NULL;
	/* The neighbours' ranges come from the same table: at most they touch. */
	if ((at > 0 && k->v[at - 1].end > a.start) || (at < k->n && k->v[at].start < a.end))
		return NULL;
	size_t nl = strlen(a.name), ml = strlen(a.module);
	char *s = malloc(nl + ml + 2);
	if (!s || grow((void **)&k->v, &k->cap, k->n + 1, sizeof(*k->v), 256) < 0) {
		free(s);
		return NULL;
	}
	memcpy(s, a.name, nl + 1);
	memcpy(s + nl + 1, a.module, ml + 1);
	memmove(&k->v[at + 1], &k->v[at], (k->n - at) * sizeof(*k->v));
	k->v[at] = (struct ksym){ .start = a.start, .end = a.end, .name = s,
				  .module = s + nl + 1 };
	k->n++;
	return &k->v[at];
}

struct ksym *
ksyms_find(struct ksyms *k, uint64_t ip)
{
	size_t at;
	struct ksym *s = table_find(k, ip, &at);
	if (s || !k->text || k->loaded || k->hidden || k->fd < 0)
		return s;
	if (k->live && (s = live_find(k, ip, at)))
		return s;
	/* Once, the whole file: from then on the table answers everything. */
	if (k->verbose)
		warnx("kernel symbols: %#llx takes the whole file", (unsigned long long)ip);
	ksymbpf_close(k->live);
	k->live = NULL;
	load_rest(k);
	return table_find(k, ip, &at);
}

void
ksyms_free(struct ksyms *k)
{
	if (!k)
		return;
	if (!k->loaded)
		for (size_t i = 0; i < k->n; i++)
			free(k->v[i].name);
	free(k->v);
	if (k->text && k->fd >= 0)
		close(k->fd);
	free(k->text);
	ksymbpf_close(k->live);
	memset(k, 0, sizeof(*k));
	k->fd = -1;
}
