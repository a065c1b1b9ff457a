/* libFuzzer target: the symbolizer opening arbitrary bytes as an ELF module (libelf, libdw,
 * the symbol table, DWARF and line indexes) and looking addresses up in whatever it indexed.
 * Addresses are taken from the module's own segments, symbols, functions and line rows, so
 * lookups land inside the indexes rather than only in the gaps.  A fresh symbolizer per
 * input: nothing may survive an iteration, so leaks show up. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../unwind/symbolize.h"
#include "../unwind/symmod.h"

#define MAXF 8

static char path[64];
static volatile size_t sink; /* keeps the string reads below from being optimized out */

static void
remove_input(void)
{
	unlink(path);
}

static void
lookup(struct symmod *m, uint64_t vaddr)
{
	struct symframe f[MAXF];

	/* max 1 keeps only the physical frame; MAXF walks whole inline chains. */
	sink += (size_t)symmod_lookup(m, vaddr, f, 1);
	int n = symmod_lookup(m, vaddr, f, MAXF);
	for (int i = 0; i < n; i++) {
		sink += strlen(f[i].name) + strlen(f[i].system_name) + f[i].line;
		if (f[i].file)
			sink += strlen(f[i].file);
	}
}

static void
offset(struct symmod *m, uint64_t off)
{
	uint64_t vaddr;

	if (symmod_offset_to_vaddr(m, off, &vaddr) == 0)
		lookup(m, vaddr);
}

/* A few addresses from each index, including both ends of every range. */
static void
probe(struct symmod *m, uint64_t tail)
{
	size_t k;

	lookup(m, 0);
	lookup(m, UINT64_MAX);
	lookup(m, tail);
	offset(m, 0);
	offset(m, 0x1000);
	offset(m, tail);
	for (int i = 0; i < m->nsegs && i < 8; i++) {
		offset(m, m->segs[i].offset);
		offset(m, m->segs[i].offset + m->segs[i].size - 1);
		offset(m, m->segs[i].offset + m->segs[i].size);
	}
	for (k = 0; k < m->syms.n && k < 16; k++) {
		lookup(m, m->syms.v[k].lo);
		lookup(m, m->syms.v[k].hi - 1);
	}
	for (k = 0; k < m->dw.nfuncs && k < 16; k++) {
		lookup(m, m->dw.funcs[k].lo);
		lookup(m, m->dw.funcs[k].hi - 1);
	}
	for (k = 0; k < m->dw.nsegs && k < 16; k++)
		lookup(m, m->dw.segs[k].lo);
	for (k = 0; k < m->dw.nlines && k < 16; k++)
		lookup(m, m->dw.lines[k].addr);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!path[0]) {
		snprintf(path, sizeof(path), "/tmp/symbolize_elf.%d", (int)getpid());
		atexit(remove_input);
	}
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
		abort();
	struct symbolizer *sym = symbolizer_new(NULL, 0, NULL);
	if (!sym)
		abort();
	struct symmod *m = symbolizer_module(sym, path, NULL, 0);
	if (m) {
		uint64_t tail = 0;
		memcpy(&tail, data + size - (size < 8 ? size : 8), size < 8 ? size : 8);
		sink += strlen(symmod_path(m)) + (size_t)symmod_has_dwarf(m);
		probe(m, tail);
		/* The cache must hand back the same module. */
		if (symbolizer_module(sym, path, NULL, 0) != m)
			abort();
	} else {
		sink += strlen(symbolizer_error(sym));
	}
	symbolizer_free(sym);
	return 0;
}
