/*
 * simpleperf's additions to perf.data: the FILE section (symbol tables copied into the
 * capture), META_INFO (event names among other keys) and private records numbered from
 * 32768.  The kernel's symbols become FR_KSYM frames, those of ELF and DEX files FR_USYM
 * frames (usym.c); both are sent after the target frame.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"

enum {
	SP_FILE_KERNEL = 0,
	SP_FILE_MODULE = 1,
	SP_EVENT_ID = 32774,
};

/* A NUL-terminated string at p[*o], within n bytes; NULL when it is not terminated. */
static const char *
cstr(const uint8_t *p, size_t n, size_t *o, size_t *len)
{
	if (*o >= n)
		return NULL;
	*len = strnlen((const char *)p + *o, n - *o);
	if (*len == n - *o)
		return NULL;
	const char *s = (const char *)p + *o;
	*o += *len + 1;
	return s;
}

static int
add_ksym(struct imp *m, uint64_t start, uint32_t len, const char *name, size_t nlen,
	 const char *module, size_t mlen)
{
	if ((m->nksyms & (m->nksyms - 1)) == 0 && m->nksyms >= 16) {
		void *v = realloc(m->ksyms, 2 * m->nksyms * sizeof(*m->ksyms));
		if (!v)
			return -1;
		m->ksyms = v;
	} else if (!m->ksyms && !(m->ksyms = malloc(16 * sizeof(*m->ksyms)))) {
		return -1;
	}
	uint64_t end = start + (len ? len : 1);
	m->ksyms[m->nksyms++] = (struct fr_ksym){
		.start = start, .end = end < start ? UINT64_MAX : end,
		.name = { name, (uint16_t)(nlen < STREAM_MAX_STR ? nlen : STREAM_MAX_STR - 1) },
		.module = { module, (uint16_t)(mlen < STREAM_MAX_STR ? mlen : STREAM_MAX_STR - 1) },
	};
	return 0;
}

/* path, u32 file_type, u64 min_vaddr, u32 symbol_count, {u64 vaddr, u32 len, name}[],
 * then per type: DEX file offsets, an ELF's u64 file offset of min_vaddr (newer versions). */
static int
file_entry(struct imp *m, const uint8_t *p, size_t n, uint64_t off)
{
	size_t o = 0, plen, nlen;
	const char *path = cstr(p, n, &o, &plen);
	if (!path || n - o < 16)
		return imp_fail(m, off, "simpleperf file entry is corrupt");
	uint32_t type = bo32(m->bo, p + o);
	uint64_t min_vaddr = bo64(m->bo, p + o + 4);
	uint32_t count = bo32(m->bo, p + o + 12);
	o += 16;
	int user = usym_is_user(type);
	if (type != SP_FILE_KERNEL && type != SP_FILE_MODULE && !user)
		return 0;
	const char *mod = type == SP_FILE_MODULE ? strrchr(path, '/') : NULL;
	mod = mod ? mod + 1 : type == SP_FILE_MODULE ? path : "";
	for (uint32_t i = 0; i < count; i++) {
		if (n - o < 12)
			return imp_fail(m, off + o, "simpleperf symbol runs past its file entry");
		uint64_t vaddr = bo64(m->bo, p + o);
		uint32_t len = bo32(m->bo, p + o + 8);
		o += 12;
		const char *name = cstr(p, n, &o, &nlen);
		if (!name)
			return imp_fail(m, off + o, "simpleperf symbol name is not terminated");
		if ((user ? usym_add(m, vaddr, len, name, nlen)
			  : add_ksym(m, vaddr, len, name, nlen, mod, strlen(mod))) < 0)
			return imp_fail(m, off, "out of memory");
	}
	if (user && usym_module(m, type, path, plen, min_vaddr, p + o, n - o) < 0)
		return imp_fail(m, off, "out of memory");
	return 0;
}

int
simpleperf_file_section(struct imp *m, const uint8_t *src, size_t n, uint64_t off)
{
	if (m->sp_file) {
		imp_note(m, "a second simpleperf FILE section was ignored");
		return 0;
	}
	/* The symbols point into a copy: a pipe source drops the bytes it has read. */
	if (!(m->sp_file = malloc(n ? n : 1)))
		return imp_fail(m, off, "out of memory");
	memcpy(m->sp_file, src, n);
	const uint8_t *p = (const uint8_t *)m->sp_file;
	for (size_t o = 0; o < n;) {
		if (n - o < 4 || bo32(m->bo, p + o) > n - o - 4)
			return imp_fail(m, off + o, "simpleperf file entry runs past its section");
		size_t size = bo32(m->bo, p + o);
		if (file_entry(m, p + o + 4, size, off + o + 4) < 0)
			return -1;
		o += 4 + size;
	}
	return 0;
}

/* event_type_info: lines of "name,type,config". */
static void
event_names(struct imp *m, const char *v, size_t n)
{
	char line[160];
	for (size_t o = 0; o < n;) {
		const char *nl = memchr(v + o, '\n', n - o);
		size_t len = nl ? (size_t)(nl - v - o) : n - o;
		if (len < sizeof(line)) {
			memcpy(line, v + o, len);
			line[len] = 0;
			char *c2 = strrchr(line, ','), *c1;
			if (c2 && (*c2 = 0, c1 = strrchr(line, ','))) {
				*c1 = 0;
				uint32_t type = (uint32_t)strtoul(c1 + 1, NULL, 10);
				uint64_t config = strtoull(c2 + 1, NULL, 10);
				for (size_t i = 0; i < m->nattrs; i++)
					if (m->attrs[i].type == type && m->attrs[i].config == config &&
					    !m->attrs[i].name[0])
						snprintf(m->attrs[i].name, sizeof(m->attrs[i].name),
							 "%.63s", line);
			}
		}
		o += len + 1;
	}
}

int
simpleperf_meta_info(struct imp *m, const uint8_t *p, size_t n)
{
	size_t o = 0, klen, vlen;
	const char *k, *v;
	while ((k = cstr(p, n, &o, &klen)) && (v = cstr(p, n, &o, &vlen)))
		if (!strcmp(k, "event_type_info"))
			event_names(m, v, vlen);
	return 0;
}

int
simpleperf_record(struct imp *m, uint32_t type, const uint8_t *r, size_t size, uint64_t off)
{
	m->simpleperf = 1;
	if (type != SP_EVENT_ID) {
		records_skip(m, type);
		return 0;
	}
	/* u64 count, {u64 attr index, u64 event id}[count]: ids the attr section left out. */
	if (size < 16 || bo64(m->bo, r + 8) > (size - 16) / 16)
		return imp_fail(m, off, "simpleperf event id record is corrupt");
	for (uint64_t i = 0, n = bo64(m->bo, r + 8); i < n; i++) {
		uint64_t a = bo64(m->bo, r + 16 + 16 * i);
		if (a < m->nattrs && ids_add(m, bo64(m->bo, r + 24 + 16 * i), (uint32_t)a) < 0)
			return imp_fail(m, off, "out of memory");
	}
	return 0;
}
