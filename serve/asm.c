/* asm: POST /asm/v1, the instructions of a code range disassembled by capstone.  The bytes
 * come from the module's own ELF (its recorded path, else the file the symbolizer read,
 * which in the module cache may be a reduced copy without code: then the next candidate),
 * after its build id was checked. */
#include <capstone/capstone.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <string.h>
#include <unistd.h>

#include "opener.h"
#include "reqparse.h"
#include "symapi.h"
#include "symbolize.h"
#include "symelf.h"

#define ASM_MAX_BYTES (1u << 20)	/* one function's worth; more is refused */

struct code {
	uint8_t *bytes;
	size_t n;
	unsigned machine;
};

/* Copies [va, va + size) from an executable section of path, when its build id is id. */
static int
read_code(const char *path, const uint8_t *id, size_t idlen, uint64_t va, uint64_t size,
	  struct code *c)
{
	uint8_t got[SYM_BUILD_ID_MAX];
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), rc = -1;
	Elf *e;

	/* outside the Landlock rules: through unwind's module opener, ELF files only */
	if (fd < 0 && errno == EACCES)
		fd = opener_open(path);
	e = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;

	if (!e || !gelf_getehdr(e, &eh) || symelf_build_id(e, got) != idlen ||
	    memcmp(got, id, idlen) != 0)
		goto out;
	while ((scn = elf_nextscn(e, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || va < sh.sh_addr ||
		    va - sh.sh_addr >= sh.sh_size)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		uint64_t at = va - sh.sh_addr;
		if (!d || d->d_size != sh.sh_size)
			break;
		c->n = (size_t)(size < d->d_size - at ? size : d->d_size - at);
		if ((c->bytes = malloc(c->n + 1))) {
			memcpy(c->bytes, (uint8_t *)d->d_buf + at, c->n);
			c->machine = eh.e_machine;
			rc = 0;
		}
		break;
	}
out:
	elf_end(e);
	if (fd >= 0)
		close(fd);
	return rc;
}

static json_t *
disassemble(const struct code *c, uint64_t va, const char **arch, char *err, size_t errlen)
{
	cs_arch a = c->machine == EM_AARCH64 ? CS_ARCH_ARM64 : CS_ARCH_X86;
	cs_mode mode = c->machine == EM_AARCH64 ? CS_MODE_ARM :
		       c->machine == EM_386 ? CS_MODE_32 : CS_MODE_64;
	csh h;
	cs_insn *ins;

	if (c->machine != EM_X86_64 && c->machine != EM_386 && c->machine != EM_AARCH64) {
		snprintf(err, errlen, "no disassembler for ELF machine %u", c->machine);
		return NULL;
	}
	*arch = c->machine == EM_AARCH64 ? "aarch64" : c->machine == EM_386 ? "x86" : "x86_64";
	if (cs_open(a, mode, &h) != CS_ERR_OK) {
		snprintf(err, errlen, "capstone: cannot open the disassembler");
		return NULL;
	}
	size_t n = cs_disasm(h, c->bytes, c->n, va, 0, &ins);
	json_t *list = json_array();
	for (size_t i = 0; i < n; i++) {
		char text[256];
		snprintf(text, sizeof(text), "%s%s%s", ins[i].mnemonic, ins[i].op_str[0] ? " " : "",
			 ins[i].op_str);
		json_array_append_new(list, json_pack("[I, s]", (json_int_t)(ins[i].address - va),
						      text));
	}
	if (n)
		cs_free(ins, n);
	cs_close(&h);
	return list;
}

/* The bytes of the range from the first candidate file that has them. */
static int
find_code(struct serve *s, const struct asmreq *r, struct symmod *m, uint64_t va,
	  uint64_t size, struct code *c)
{
	const struct modent *e = NULL;
	uint8_t id[SYM_BUILD_ID_MAX];
	size_t idlen = 0;

	for (size_t i = 0; i < s->mods.n && !e; i++)
		if ((r->code_id[0] && strcmp(s->mods.e[i].build_id, r->code_id) == 0) ||
		    (!r->code_id[0] && strcasecmp(s->mods.e[i].breakpad, r->debug_id) == 0))
			e = &s->mods.e[i];
	if (!e)
		return -1;
	for (size_t i = 0; i + 1 < strlen(e->build_id) && idlen < sizeof(id); i += 2) {
		unsigned v;
		sscanf(e->build_id + i, "%2x", &v);
		id[idlen++] = (uint8_t)v;
	}
	if (e->path && read_code(e->path, id, idlen, va, size, c) == 0)
		return 0;
	return read_code(symmod_path(m), id, idlen, va, size, c);
}

static int
asm_answer(struct serve *s, const char *body, size_t len, struct answer *a)
{
	struct asmreq r;
	struct code c = { 0 };
	struct symmod *m;
	uint64_t va, lo, hi, size;
	const char *arch = NULL;
	char why[600];

	if (asmreq_parse(body, len, &r, why, sizeof(why)) < 0)
		return answer_error(a, 400, "asm/v1: %s", why);
	if (!(m = symapi_module(s, r.debug_name[0] ? r.debug_name : r.name, r.debug_id,
				r.code_id, why, sizeof(why))))
		return answer_error(a, 404, "asm/v1: %s", why);
	if (symmod_offset_to_vaddr(m, r.start, &va) < 0)
		return answer_error(a, 404, "asm/v1: 0x%x is in no loadable segment", r.start);
	size = r.size;
	if (r.until_function_end && symmod_func_range(m, va, &lo, &hi) == 0 && hi > va + size)
		size = hi - va;
	if (size > ASM_MAX_BYTES)
		return answer_error(a, 400, "asm/v1: more than %u bytes asked for", ASM_MAX_BYTES);
	if (find_code(s, &r, m, va, size, &c) < 0)
		return answer_error(a, 404, "asm/v1: no readable file of the module holds code "
				    "at 0x%x", r.start);
	json_t *ins = disassemble(&c, va, &arch, why, sizeof(why));
	free(c.bytes);
	if (!ins)
		return answer_error(a, 500, "asm/v1: %s", why);
	char start[24], sz[24];
	snprintf(start, sizeof(start), "0x%x", r.start);
	snprintf(sz, sizeof(sz), "0x%zx", c.n);
	answer_json(a, json_pack("{s:s, s:s, s:s, s:[s], s:o}", "startAddress", start, "size", sz,
				 "arch", arch, "syntax", arch[0] == 'a' ? "ARM" : "Intel",
				 "instructions", ins));
	return 0;
}

void
symapi_asm(struct serve *s, const char *body, size_t len, struct answer *a)
{
	(void)asm_answer(s, body, len, a);
}
