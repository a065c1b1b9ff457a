/* The perf map and jitdump parsers (see jitparse.h). */
#include "jitparse.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"

#define DUMP_MAGIC 0x4A695444u    /* "JiTD" in the writer's byte order */
#define DUMP_MAGIC_SW 0x4454694Au /* ... in the other one */
#define DUMP_HEADER 40u           /* magic .. flags, the smallest header */
#define REC_HEADER 16u            /* id, total_size, timestamp */
#define REC_LOAD 0u
#define REC_MOVE 1u
#define LOAD_FIXED 40u            /* pid, tid, vma, code_addr, code_size, code_index */
#define MOVE_FIXED 48u            /* pid, tid, vma, old_code_addr, new_code_addr, size, index */
#define BACK_SCAN 16              /* overlapping symbols looked at below an address */

void
jittab_init(struct jittab *t)
{
	memset(t, 0, sizeof(*t));
	idmap_init(&t->index);
}

void
jittab_release(struct jittab *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].name);
	free(t->v);
	idmap_release(&t->index);
	memset(t, 0, sizeof(*t));
}

/* Adds [start, start + size) named name[0, len).  Returns the symbol's position, ADD_NONE
 * when it was not added (counted), or ADD_NOMEM. */
#define ADD_NONE ((size_t)-1)
#define ADD_NOMEM ((size_t)-2)
static size_t
add(struct jittab *t, uint64_t start, uint64_t size, const char *name, size_t len,
    uint64_t code_index)
{
	if (size == 0 || start + size < start || len == 0) {
		t->malformed++;
		return ADD_NONE;
	}
	if (t->n >= JIT_MAX_SYMBOLS) {
		t->dropped++;
		return ADD_NONE;
	}
	if (len > JIT_MAX_NAME) {
		len = JIT_MAX_NAME;
		t->truncated++;
	}
	if (grow_array((void **)&t->v, &t->cap, t->n, 1, sizeof(*t->v)) < 0)
		return ADD_NOMEM;
	char *s = malloc(len + 1);
	if (!s)
		return ADD_NOMEM;
	memcpy(s, name, len);
	s[len] = 0;
	t->v[t->n] = (struct jitsym){ start, start + size, ++t->seq, code_index, s };
	t->sorted = 0;
	return t->n++;
}

/* A hex number at *p (an optional 0x, at most 16 digits) before end: 0 and *v, or -1. */
static int
hex(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	if (end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	const char *first = s;
	uint64_t x = 0;
	for (; s < end && isxdigit((unsigned char)*s); s++) {
		if (s - first == 16)
			return -1;
		unsigned d = *s <= '9' ? (unsigned)(*s - '0') : (unsigned)((*s | 0x20) - 'a' + 10);
		x = x << 4 | d;
	}
	if (s == first)
		return -1;
	*p = s;
	*v = x;
	return 0;
}

/* One line without its newline: "START SIZE name", the name being the rest of the line. */
static int
perfmap_line(struct jittab *t, const char *s, const char *end)
{
	uint64_t start, size;
	if (end > s && end[-1] == '\r')
		end--;
	if (hex(&s, end, &start) < 0 || s == end || *s++ != ' ' || hex(&s, end, &size) < 0 ||
	    s == end || *s++ != ' ') {
		t->malformed++;
		return 0;
	}
	const char *nul = memchr(s, 0, (size_t)(end - s));
	size_t n = (size_t)((nul ? nul : end) - s);
	return add(t, start, size, s, n, JIT_NO_INDEX) == ADD_NOMEM ? -1 : 0;
}

long
jit_perfmap_parse(struct jittab *t, const char *buf, size_t len)
{
	size_t used = 0;
	const char *nl;
	while (used < len && (nl = memchr(buf + used, '\n', len - used))) {
		if (perfmap_line(t, buf + used, nl) < 0)
			return -1;
		used = (size_t)(nl - buf) + 1;
	}
	return (long)used;
}

static uint32_t
u32(const struct jitdump_state *s, const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return s->swap ? __builtin_bswap32(v) : v;
}

static uint64_t
u64(const struct jitdump_state *s, const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return s->swap ? __builtin_bswap64(v) : v;
}

/* The file header: its total_size says where the first record starts.  Returns the bytes
 * it takes, 0 when more are needed, or -1 (s->bad) when it is no jitdump. */
static long
dump_header(struct jitdump_state *s, const uint8_t *buf, size_t len)
{
	if (len < DUMP_HEADER)
		return 0;
	uint32_t magic;
	memcpy(&magic, buf, 4);
	if (magic != DUMP_MAGIC && magic != DUMP_MAGIC_SW) {
		s->bad = 1;
		return -1;
	}
	s->swap = magic == DUMP_MAGIC_SW;
	uint32_t total = u32(s, buf + 8);
	if (total < DUMP_HEADER || total > 4096) {
		s->bad = 1;
		return -1;
	}
	if (len < total)
		return 0;
	s->have_header = 1;
	return total;
}

/* JIT_CODE_LOAD: the fixed part, then the name (NUL-terminated), then the code. */
static int
dump_load(struct jittab *t, const struct jitdump_state *s, const uint8_t *p, size_t len)
{
	if (len < LOAD_FIXED + 1) {
		t->malformed++;
		return 0;
	}
	uint64_t addr = u64(s, p + 16), size = u64(s, p + 24), index = u64(s, p + 32);
	const uint8_t *name = p + LOAD_FIXED;
	const uint8_t *nul = memchr(name, 0, len - LOAD_FIXED);
	if (!nul) {
		t->malformed++;
		return 0;
	}
	size_t at = add(t, addr, size, (const char *)name, (size_t)(nul - name), index);
	if (at == ADD_NOMEM)
		return -1;
	/* A later load of the same index is what a move names from then on. */
	return at == ADD_NONE ? 0 : idmap_put(&t->index, index, (uint32_t)at);
}

/* JIT_CODE_MOVE: the code of index now lives at new_code_addr, under its old name. */
static int
dump_move(struct jittab *t, const struct jitdump_state *s, const uint8_t *p, size_t len)
{
	uint32_t at;
	if (len < MOVE_FIXED || !idmap_get(&t->index, u64(s, p + 40), &at) || at >= t->n) {
		t->malformed++;
		return 0;
	}
	uint64_t addr = u64(s, p + 24), size = u64(s, p + 32), index = u64(s, p + 40);
	const char *name = t->v[at].name;
	size_t n = add(t, addr, size, name, strlen(name), index);
	if (n == ADD_NOMEM)
		return -1;
	return n == ADD_NONE ? 0 : idmap_put(&t->index, index, (uint32_t)n);
}

long
jit_dump_parse(struct jittab *t, struct jitdump_state *s, const uint8_t *buf, size_t len)
{
	size_t used = 0;
	if (s->bad)
		return 0;
	if (!s->have_header) {
		long h = dump_header(s, buf, len);
		if (h <= 0)
			return 0;
		used = (size_t)h;
	}
	while (len - used >= REC_HEADER) {
		const uint8_t *r = buf + used;
		uint32_t id = u32(s, r), total = u32(s, r + 4);
		if (total < REC_HEADER || total > JIT_MAX_RECORD) {
			s->bad = 1;
			t->malformed++;
			break;
		}
		if (total > len - used)
			break;
		int rc = 0;
		if (id == REC_LOAD)
			rc = dump_load(t, s, r + REC_HEADER, total - REC_HEADER);
		else if (id == REC_MOVE)
			rc = dump_move(t, s, r + REC_HEADER, total - REC_HEADER);
		if (rc < 0)
			return -1;
		used += total;
	}
	return (long)used;
}

static int
cmp_sym(const void *a, const void *b)
{
	const struct jitsym *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

const struct jitsym *
jittab_find(struct jittab *t, uint64_t addr)
{
	if (!t->sorted) {
		if (t->n)	/* an empty table may have no array at all */
			qsort(t->v, t->n, sizeof(*t->v), cmp_sym);
		t->sorted = 1;
		/* Positions changed: the index a move looks its code up in follows, the
		 * latest definition of each code index winning. */
		idmap_clear(&t->index);
		for (size_t i = 0; i < t->n; i++) {
			uint32_t at;
			uint64_t k = t->v[i].code_index;
			if (k == JIT_NO_INDEX)
				continue;
			if (idmap_get(&t->index, k, &at) && t->v[at].seq > t->v[i].seq)
				continue;
			if (idmap_put(&t->index, k, (uint32_t)i) < 0)
				return NULL; /* out of memory: no name this time */
		}
	}
	size_t lo = 0, hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* lo: the first symbol starting above addr.  Below it, the latest definition that
	 * holds addr wins (code freed and compiled again at the same place). */
	const struct jitsym *best = NULL;
	for (size_t i = lo, k = 0; i > 0 && k < BACK_SCAN; i--, k++) {
		const struct jitsym *e = &t->v[i - 1];
		if (addr < e->end && (!best || e->seq > best->seq))
			best = e;
	}
	return best;
}
