/*
 * The user symbols simpleperf copies into its FILE section, sent as FR_USYM frames so that
 * unwind can name functions of modules whose files stayed on the recording device.
 *
 * Each frame carries two fields after the documented ones (docs/stream-format.md, usym):
 * the module's min_vaddr and the file offset of min_vaddr, from which unwind turns a file
 * offset into the ELF virtual address the symbols use, the way simpleperf does.
 */
#include <stdlib.h>
#include <string.h>

#include "import.h"

enum { SP_FILE_ELF = 2, SP_FILE_DEX = 3 };

int
usym_is_user(uint32_t type)
{
	return type == SP_FILE_ELF || type == SP_FILE_DEX;
}

/* Appends the module the symbols added since the last module belong to.  DEX symbols are
 * file offsets already (simpleperf: vaddr = ip - map_start + pgoff), which is min_vaddr 0
 * at file offset 0.  An ELF entry from an older simpleperf has no file offset of min_vaddr;
 * a newer one has it as the u64 after the symbols. */
int
usym_module(struct imp *m, uint32_t type, const char *path, size_t plen, uint64_t min_vaddr,
	    const uint8_t *tail, size_t tlen)
{
	struct usyms *u = &m->usyms;
	if ((u->nmods & (u->nmods - 1)) == 0) {
		void *v = realloc(u->mods, (u->nmods ? 2 * u->nmods : 1) * sizeof(*u->mods));
		if (!v)
			return -1;
		u->mods = v;
	}
	struct usym_mod *mod = &u->mods[u->nmods++];
	*mod = (struct usym_mod){ path, plen, min_vaddr, USYM_UNKNOWN };
	if (type == SP_FILE_DEX)
		mod->min_vaddr = mod->fo_min_vaddr = 0;
	else if (tlen >= 8)
		mod->fo_min_vaddr = bo64(m->bo, tail);
	return 0;
}

/* A symbol of the module usym_module appends next. */
int
usym_add(struct imp *m, uint64_t start, uint32_t len, const char *name, size_t nlen)
{
	struct usyms *u = &m->usyms;
	if (u->n == u->cap) {
		size_t cap = u->cap ? 2 * u->cap : 256;
		void *v = realloc(u->syms, cap * sizeof(*u->syms));
		if (!v)
			return -1;
		u->syms = v;
		u->cap = cap;
	}
	u->syms[u->n++] = (struct usym_ent){ (uint32_t)u->nmods, len, start, name, nlen };
	return 0;
}

static uint8_t *
put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
	return p + n;
}

static uint8_t *
put_s(uint8_t *p, const char *s, size_t n)
{
	if (n >= STREAM_MAX_STR)
		n = STREAM_MAX_STR - 1;
	p = put_le(p, n, 2);
	memcpy(p, s, n);
	return p + n;
}

/* bid build_id, str path, u64 start, u64 end, str name, u64 min_vaddr, u64 fo_min_vaddr. */
static int
emit_one(struct imp *m, const struct usym_mod *mod, const struct usym_ent *s)
{
	static uint8_t buf[21 + 2 * (2 + STREAM_MAX_STR) + 32];
	const struct buildid *b = features_find_buildid(m, mod->path, mod->plen);
	uint8_t *p = buf;
	*p++ = b ? b->len : 0;
	memset(p, 0, STREAM_BUILD_ID_MAX);
	if (b)
		memcpy(p, b->id, b->len);
	p += STREAM_BUILD_ID_MAX;
	p = put_s(p, mod->path, mod->plen);
	uint64_t end = s->start + (s->len ? s->len : 1);
	p = put_le(p, s->start, 8);
	p = put_le(p, end < s->start ? UINT64_MAX : end, 8);
	p = put_s(p, s->name, s->nlen);
	p = put_le(p, mod->min_vaddr, 8);
	p = put_le(p, mod->fo_min_vaddr, 8);
	return out_check(m, stream_write(&m->out, FR_USYM, buf, (uint32_t)(p - buf)));
}

int
usym_emit(struct imp *m)
{
	const struct usyms *u = &m->usyms;
	for (size_t i = 0; i < u->n; i++)
		if (emit_one(m, &u->mods[u->syms[i].mod], &u->syms[i]) < 0)
			return -1;
	return 0;
}

void
usym_release(struct imp *m)
{
	free(m->usyms.mods);
	free(m->usyms.syms);
	memset(&m->usyms, 0, sizeof(m->usyms));
}
