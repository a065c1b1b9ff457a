/*
 * collect's kernel symbols (collect/ksyms.c, ksymbpf.c): the kallsyms table from written
 * files (order, aliases, modules, hidden addresses), the reading of "%pS" answers, and, as
 * root where the kernel has the eBPF lookup, that a recording's lookups name every address
 * as the whole /proc/kallsyms table does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../collect/ksymbpf.h"
#include "../../collect/ksyms.h"
#include "check.h"

static char path[64];

static void
write_file(const char *text)
{
	FILE *f = fopen(path, "w");
	CHECK(f && fputs(text, f) >= 0 && fclose(f) == 0);
}

static void
test_table(void)
{
	struct ksyms k;
	/* Out of order (modules after the kernel), two names at one address, data symbols,
	 * a line without a name and one without a newline at the end. */
	write_file("ffffffff81000000 T _stext\n"
		   "ffffffff81000000 T _text\n"
		   "ffffffff81000100 D some_data\n"
		   "ffffffff81000200 t helper\n"
		   "ffffffffc0001000 t mod_fn\t[snd]\n"
		   "ffffffff81000400 W weak_fn\n"
		   "ffffffff81000500 T\n"
		   "ffffffffc0000800 t first_mod_fn\t[snd]\n"
		   "ffffffff81000300 T late_fn");
	CHECK(ksyms_load(&k, path) == 0);
	CHECK(k.tab.n == 6);
	const char *names[] = { "_stext", "helper", "late_fn", "weak_fn", "first_mod_fn",
				"mod_fn" };
	for (size_t i = 0; i < 6 && i < k.tab.n; i++) {
		CHECK(strcmp(k.tab.v[i].name, names[i]) == 0);
		CHECK(i == 0 || k.tab.v[i - 1].end == k.tab.v[i].start);
	}
	struct ksym *s = ksyms_find(&k, 0xffffffff81000250);
	CHECK(s && strcmp(s->name, "helper") == 0 && strcmp(s->module, "") == 0);
	s = ksyms_find(&k, 0xffffffffc0001010);
	CHECK(s && strcmp(s->name, "mod_fn") == 0 && strcmp(s->module, "snd") == 0 &&
	      s->end == 0xffffffffc0002000);
	CHECK(ksyms_find(&k, 0xffffffff80ffffff) == NULL);
	CHECK(ksyms_find(&k, 0xffffffffc0002000) == NULL);
	ksyms_free(&k);

	/* kptr_restrict: every address reads 0. */
	write_file("0000000000000000 T _stext\n0000000000000000 t helper\n");
	CHECK(ksyms_load(&k, path) == 0 && k.tab.n == 0 && k.hidden);
	ksyms_free(&k);
	CHECK(ksyms_open(&k, path, 0) == 0 && k.hidden && !k.live);
	CHECK(ksyms_find(&k, 0xffffffff81000000) == NULL);
	ksyms_free(&k);
	CHECK(ksyms_load(&k, "/nonexistent/kallsyms") < 0);
}

/* The parser collect and import share (lib/ksymtab.c), on a buffer: malformed lines,
 * hidden addresses counted, modules with and without brackets, the spare byte cut. */
static void
test_lib_parse(void)
{
	char text[] = "ffffffff81000000 T _text\n"
		      "1ffffffff81000100 T too_many_digits\n"
		      "ffffffff8100zz00 T not_hex\n"
		      "0000000000000000 T hidden\n"
		      "ffffffff81000200 TT two_letters\n"
		      "ffffffff81000300\tt\ttabbed\t[mod_a]\n"
		      "ffffffff81000400 t bare mod_b\n"
		      "ffffffff81000500 t last";
	struct ksymtab t = { 0 };
	size_t zeros = 0;
	CHECK(ksymtab_parse(&t, text, sizeof(text) - 1, &zeros) == 0);
	CHECK(t.n == 4 && zeros == 1);
	if (t.n == 4) {
		CHECK(strcmp(t.v[0].name, "_text") == 0 && t.v[0].module[0] == 0);
		CHECK(strcmp(t.v[1].name, "tabbed") == 0 && strcmp(t.v[1].module, "mod_a") == 0);
		CHECK(strcmp(t.v[2].name, "bare") == 0 && strcmp(t.v[2].module, "mod_b") == 0);
		CHECK(strcmp(t.v[3].name, "last") == 0 && t.v[3].end == 0xffffffff81001500);
		CHECK(ksymtab_find(&t, 0xffffffff810002ff, NULL) == &t.v[0]);
		CHECK(ksymtab_find(&t, 0xffffffff81001500, NULL) == NULL);
	}
	ksymtab_clear(&t);
}

static void
test_parse(void)
{
	struct ksymbpf_answer a;
	CHECK(ksymbpf_parse("__schedule+0x20/0xf60", 0xffffffff82265c00, &a) == 1);
	CHECK(strcmp(a.name, "__schedule") == 0 && a.module[0] == 0);
	CHECK(a.start == 0xffffffff82265be0 && a.end == 0xffffffff82266b40);
	CHECK(ksymbpf_parse("snd_pcm_read+0x0/0x10 [snd_pcm]", 0xffffffffc0001000, &a) == 1);
	CHECK(strcmp(a.name, "snd_pcm_read") == 0 && strcmp(a.module, "snd_pcm") == 0);
	CHECK(a.start == 0xffffffffc0001000 && a.end == 0xffffffffc0001010);
	CHECK(ksymbpf_parse("a+b+0x1/0x2", 0x11, &a) == 1 && strcmp(a.name, "a+b") == 0);
	/* No symbol, an offset at or past the size, a size of 0, cut short, no name. */
	CHECK(ksymbpf_parse("0xffffffffc0201010", 0xffffffffc0201010, &a) == 0);
	CHECK(ksymbpf_parse("f+0x10/0x10", 0x1000, &a) == 0);
	CHECK(ksymbpf_parse("f+0x0/0x0", 0x1000, &a) == 0);
	CHECK(ksymbpf_parse("f+0x0/0x10 [mo", 0x1000, &a) == 0);
	CHECK(ksymbpf_parse("f+0x0/0x", 0x1000, &a) == 0);
	CHECK(ksymbpf_parse("+0x0/0x10", 0x1000, &a) == 0);
	CHECK(ksymbpf_parse("f+0x2000/0x3000", 0x1000, &a) == 0);
}

/* Every 97th symbol of the whole table, at its start, inside and at its last byte: the
 * lookup a recording makes gives the same name, module and range. */
static void
test_live(void)
{
	struct ksyms table, live;
	if (geteuid() != 0) {
		printf("ksyms_test: not root, the eBPF lookup is not compared\n");
		return;
	}
	/* The lookup first: the table then holds its own program, a BPF symbol that lives as
	 * long as the test. */
	CHECK(ksyms_open(&live, "/proc/kallsyms", 0) == 0);
	CHECK(ksyms_load(&table, "/proc/kallsyms") == 0);
	if (!live.live || table.tab.n == 0) {
		printf("ksyms_test: no eBPF lookup here (%s)\n", ksyms_how(&live));
		ksyms_free(&table);
		ksyms_free(&live);
		return;
	}
	size_t compared = 0;
	for (size_t i = 0; i + 1 < table.tab.n; i += 97) {
		const struct ksym *t = &table.tab.v[i];
		/* kallsyms' own entries (BPF programs, ftrace and kprobe trampolines) go to the
		 * table by design: the lookup must not answer for them. */
		if (strncmp(t->name, "bpf_", 4) == 0 || strncmp(t->module, "__builtin__", 11) == 0 ||
		    strcmp(t->module, "bpf") == 0)
			continue;
		uint64_t ips[] = { t->start, t->start + (t->end - t->start) / 2, t->end - 1 };
		for (size_t j = 0; j < 3; j++) {
			struct ksym *l = ksyms_find(&live, ips[j]);
			CHECK(l && strcmp(l->name, t->name) == 0 && strcmp(l->module, t->module) == 0 &&
			      l->start == t->start && l->end == t->end);
			compared++;
		}
	}
	CHECK(compared > 100);
	CHECK(!live.loaded);	/* the kernel answered each: the table never had to */
	/* BPF programs' symbols (this lookup's own among them; other processes may hold more,
	 * and end them): kallsyms' module "bpf", the range ending with the program. */
	size_t progs = 0, by_kernel = 0;
	for (size_t i = 0; i < table.tab.n; i++) {
		const struct ksym *t = &table.tab.v[i];
		size_t nl = strlen(t->name);
		if (strcmp(t->module, "bpf") != 0 || nl < 10 || strcmp(t->name + nl - 10, "_ksym_name"))
			continue;
		int was_live = !live.loaded;
		struct ksym *l = ksyms_find(&live, t->start + 1);
		if (!l)
			continue;	/* another process's, gone since */
		CHECK(strcmp(l->name, t->name) == 0 && strcmp(l->module, "bpf") == 0 &&
		      l->start == t->start && l->end > l->start && l->end <= t->end);
		progs++;
		by_kernel += was_live && !live.loaded;
	}
	CHECK(progs >= 1 && by_kernel >= 1);
	CHECK(ksyms_find(&live, 1) == NULL && ksyms_find(&table, 1) == NULL);
	ksyms_free(&table);
	ksyms_free(&live);
}

int
main(void)
{
	snprintf(path, sizeof(path), "/tmp/ksyms_test.%d", (int)getpid());
	test_table();
	test_lib_parse();
	test_parse();
	unlink(path);
	test_live();
	printf("ksyms_test: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
