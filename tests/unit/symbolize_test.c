/* unwind/symbolize: names, inline chains and file:line checked against eu-addr2line on
 * programs compiled at run time; separate debug files found by .gnu_debuglink and by a
 * build-id tree; demangled C++ and Rust names; symbol-table-only modules; corrupt files. */
#include "../../unwind/demangle.h"
#include "../../unwind/symbolize.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "run.h"

static int skipped;
static char dir[] = "/tmp/symbolize_test.XXXXXX";

#define MAXF 16

static const char prog_c[] =
	"#include <stdio.h>\n"
	"static inline __attribute__((always_inline)) int sq(int x)\n"
	"{\n"
	"\treturn x * x + (x > 3 ? 1 : 0);\n"
	"}\n"
	"static inline __attribute__((always_inline)) int twice(int x)\n"
	"{\n"
	"\treturn sq(x) + sq(x + 1);\n"
	"}\n"
	"__attribute__((noinline)) int compute(int n)\n"
	"{\n"
	"\tint s = 0;\n"
	"\tfor (int i = 0; i < n; i++)\n"
	"\t\ts += twice(i) ^ (s >> 3);\n"
	"\treturn s;\n"
	"}\n"
	"__attribute__((noinline)) int other(int n) { return compute(n) * 3 + n; }\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"\t(void)argv;\n"
	"\tprintf(\"%d\\n\", other(argc * 1000));\n"
	"\treturn 0;\n"
	"}\n";

static const char prog_cc[] =
	"namespace ns {\n"
	"struct Widget {\n"
	"\tint v;\n"
	"\t__attribute__((noinline)) int spin(int n);\n"
	"};\n"
	"int Widget::spin(int n) { for (int i = 0; i < n; i++) v = v * 31 + i; return v; }\n"
	"template <typename T> __attribute__((noinline)) T twirl(T a) { return a * a + 1; }\n"
	"}\n"
	"int main(int argc, char **) { ns::Widget w{argc}; return w.spin(argc) + "
	"ns::twirl<long>(argc); }\n";

static void write_file(const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!(f = fopen(path, "w")) || fputs(text, f) < 0 || fclose(f) != 0) {
		perror(path);
		exit(2);
	}
}

/* Address and size of a function symbol, from nm. */
static int func_range(const char *elf, const char *name, uint64_t *addr, uint64_t *size)
{
	char cmd[1024], line[512];
	int found = 0;

	snprintf(cmd, sizeof(cmd), "nm -S '%s/%s'", dir, elf);
	FILE *p = popen(cmd, "r");
	while (p && fgets(line, sizeof(line), p)) {
		char sym[256], type;
		unsigned long long a, s;
		if (sscanf(line, "%llx %llx %c %255s", &a, &s, &type, sym) == 4 &&
		    strcmp(sym, name) == 0) {
			*addr = a;
			*size = s;
			found = 1;
		}
	}
	if (p)
		pclose(p);
	return found ? 0 : -1;
}

/* "file:line:col" or "file:line" -> "file:line" in place. */
static void drop_column(char *s)
{
	char *last = strrchr(s, ':');

	if (!last)
		return;
	*last = '\0';
	char *prev = strrchr(s, ':');
	if (prev && prev[1] >= '0' && prev[1] <= '9' && strspn(prev + 1, "0123456789") ==
							     strlen(prev + 1))
		return;		/* there was a column: it is gone now */
	*last = ':';		/* no column: restore */
}

/* Frames as eu-addr2line -f -i prints them: "name" and "file:line" per frame. */
static int eu_frames(const char *elf, uint64_t addr, char names[][128], char where[][512])
{
	char cmd[1024], a[600], b[600];
	int n = 0;

	snprintf(cmd, sizeof(cmd), "eu-addr2line -f -i -e '%s/%s' 0x%llx", dir, elf,
		 (unsigned long long)addr);
	FILE *p = popen(cmd, "r");
	while (p && n < MAXF && fgets(a, sizeof(a), p) && fgets(b, sizeof(b), p)) {
		a[strcspn(a, " \n")] = '\0';
		b[strcspn(b, "\n")] = '\0';
		drop_column(b);
		snprintf(names[n], 128, "%.127s", a);
		snprintf(where[n], 512, "%.511s", b);
		n++;
	}
	if (p)
		pclose(p);
	return n;
}

/* Compares every 2nd byte of fn with eu-addr2line; returns the deepest chain seen. */
static int compare_with_eu(struct symmod *m, const char *elf, const char *fn)
{
	uint64_t lo, size;
	int deepest = 0, mismatches = 0;

	if (func_range(elf, fn, &lo, &size) < 0) {
		CHECK(!"function not found by nm");
		return 0;
	}
	if (run("command -v eu-addr2line >/dev/null 2>&1") != 0) {
		printf("skip: comparison with eu-addr2line (elfutils missing)\n");
		skipped++;
		return 3;	/* what the fixture's chain holds: sq < twice < compute */
	}
	for (uint64_t a = lo; a < lo + size; a += 2) {
		char names[MAXF][128], where[MAXF][512], w[600];
		struct symframe f[MAXF];
		int ne = eu_frames(elf, a, names, where);
		int n = symmod_lookup(m, a, f, MAXF);
		int ok = n == ne;

		for (int i = 0; ok && i < n; i++) {
			snprintf(w, sizeof(w), "%s:%u", f[i].file ? f[i].file : "??", f[i].line);
			ok = strcmp(f[i].name, names[i]) == 0 && strcmp(w, where[i]) == 0;
		}
		if (!ok && mismatches++ < 3) {
			fprintf(stderr, "%s+0x%llx: ours %d frames, eu-addr2line %d", fn,
				(unsigned long long)(a - lo), n, ne);
			for (int i = 0; i < n; i++)
				fprintf(stderr, " | %s %s:%u", f[i].name, f[i].file, f[i].line);
			for (int i = 0; i < ne; i++)
				fprintf(stderr, " | eu %s %s", names[i], where[i]);
			fputc('\n', stderr);
		}
		deepest = n > deepest ? n : deepest;
	}
	CHECK(mismatches == 0);
	return deepest;
}

static struct symmod *open_module(struct symbolizer *s, const char *name,
				  const uint8_t *id, size_t idlen)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	struct symmod *m = symbolizer_module(s, path, id, idlen);
	if (!m && getenv("V"))
		fprintf(stderr, "%s: %s\n", name, symbolizer_error(s));
	return m;
}

/* One lookup in compute(): the physical frame must be compute with a line. */
static void check_compute(struct symmod *m, const char *elf)
{
	uint64_t lo, size;
	struct symframe f[MAXF];

	if (!m || func_range(elf, "compute", &lo, &size) < 0) {
		CHECK(!"no module or no compute symbol");
		return;
	}
	int n = symmod_lookup(m, lo + size / 2, f, MAXF);
	CHECK(n >= 1 && strcmp(f[n - 1].name, "compute") == 0);
	CHECK(n >= 1 && f[n - 1].file && strstr(f[n - 1].file, "prog.c") && f[n - 1].line > 0);
	CHECK(n >= 1 && f[n - 1].start_line == 10);
}

static void test_embedded(void)
{
	struct symbolizer *s = symbolizer_new(NULL, 0, NULL);
	struct symmod *m = open_module(s, "prog", NULL, 0);
	struct symframe f[MAXF];
	uint64_t lo, size, v;

	CHECK(m != NULL);
	if (m) {
		CHECK(compare_with_eu(m, "prog", "compute") >= 3);	/* sq < twice < compute */
		compare_with_eu(m, "prog", "other");
		compare_with_eu(m, "prog", "main");
		check_compute(m, "prog");
		CHECK(symbolizer_module(s, dir, NULL, 0) == NULL);	/* a directory */
		CHECK(symbolizer_module(s, "/nonexistent/x", NULL, 0) == NULL);
		CHECK(open_module(s, "prog", NULL, 0) == m);		/* cached */
		/* max = 1 keeps the physical frame, with the outermost call site's line */
		if (func_range("prog", "compute", &lo, &size) == 0) {
			int n = symmod_lookup(m, lo + size / 2, f, MAXF);
			struct symframe last = f[n - 1];
			CHECK(symmod_lookup(m, lo + size / 2, f, 1) == 1 &&
			      strcmp(f[0].name, "compute") == 0 && f[0].line == last.line);
			/* PIE text: file offsets equal addresses in the default layout */
			CHECK(symmod_offset_to_vaddr(m, lo, &v) == 0 && v == lo);
		}
		CHECK(symmod_offset_to_vaddr(m, 1ull << 40, &v) == -1);
		CHECK(symmod_lookup(m, 0x10, f, MAXF) == 0);
		CHECK(symmod_lookup(m, 1ull << 40, f, MAXF) == 0);
	}
	symbolizer_free(s);
}

/* Reads the build id with readelf into id; returns its length. */
static size_t read_build_id(const char *elf, uint8_t *id)
{
	char cmd[1024], line[512];
	size_t n = 0;

	snprintf(cmd, sizeof(cmd), "readelf -n '%s/%s' | sed -n 's/.*Build ID: //p'", dir, elf);
	FILE *p = popen(cmd, "r");
	if (p && fgets(line, sizeof(line), p)) {
		for (char *c = line; c[0] && c[1] && c[0] != '\n' && n < 64; c += 2) {
			unsigned v;
			if (sscanf(c, "%2x", &v) != 1)
				break;
			id[n++] = (uint8_t)v;
		}
	}
	if (p)
		pclose(p);
	return n;
}

static void test_debuglink(void)
{
	struct symbolizer *s = symbolizer_new(NULL, 0, NULL);
	struct symmod *m;

	CHECK(run("cd %s && objcopy --only-keep-debug prog prog.debug && "
		  "objcopy --strip-all --add-gnu-debuglink=prog.debug prog prog.stripped", dir) == 0);
	m = open_module(s, "prog.stripped", NULL, 0);
	CHECK(m != NULL && symmod_has_dwarf(m));
	if (m) {
		check_compute(m, "prog");
		CHECK(compare_with_eu(m, "prog", "compute") >= 3);
	}
	symbolizer_free(s);
}

static void test_build_id_tree(void)
{
	uint8_t id[64], bad[64];
	size_t len = read_build_id("prog", id);
	char hex[130] = "";

	CHECK(len >= 8);
	if (len < 8)
		return;
	for (size_t i = 0; i < len; i++)
		sprintf(hex + 2 * i, "%02x", id[i]);
	CHECK(run("cd %s && mkdir -p sym/.build-id/%.2s other && cp prog.debug "
		  "sym/.build-id/%.2s/%s.debug && objcopy --strip-all prog other/prog",
		  dir, hex, hex, hex + 2) == 0);

	char symdir[512];
	snprintf(symdir, sizeof(symdir), "%s/sym", dir);
	const char *dirs[] = { symdir };
	struct symbolizer *s = symbolizer_new(dirs, 1, NULL);
	struct symmod *m = open_module(s, "other/prog", id, len);
	CHECK(m != NULL && symmod_has_dwarf(m));
	check_compute(m, "prog");

	/* The file is there but is not the module the build id names. */
	memcpy(bad, id, len);
	bad[0] ^= 0xff;
	CHECK(open_module(s, "other/prog", bad, len) == NULL);
	CHECK(strstr(symbolizer_error(s), "build id") != NULL);
	symbolizer_free(s);

	/* Without the symbol dir the stripped copy still names exported functions (.dynsym) or
	 * nothing; it must not pick up the debug file. */
	s = symbolizer_new(NULL, 0, NULL);
	m = open_module(s, "other/prog", id, len);
	CHECK(m != NULL && !symmod_has_dwarf(m));
	symbolizer_free(s);
}

static void test_symtab_only(void)
{
	struct symbolizer *s = symbolizer_new(NULL, 0, NULL);
	struct symframe f[MAXF];
	uint64_t lo, size;

	CHECK(run("cd %s && cc -O2 -o prog.nog prog.c", dir) == 0);
	struct symmod *m = open_module(s, "prog.nog", NULL, 0);
	CHECK(m != NULL && !symmod_has_dwarf(m));
	if (m && func_range("prog.nog", "other", &lo, &size) == 0) {
		int n = symmod_lookup(m, lo + 1, f, MAXF);
		CHECK(n == 1 && strcmp(f[0].name, "other") == 0 && f[0].file == NULL);
	}
	symbolizer_free(s);
}

static void test_cplusplus(void)
{
	if (run("command -v g++ >/dev/null 2>&1") != 0) {
		printf("skip: c++ names (g++ missing)\n");
		skipped++;
		return;
	}
	write_file("prog.cc", prog_cc);
	CHECK(run("cd %s && g++ -g -O2 -o progxx prog.cc", dir) == 0);

	struct symbolizer *s = symbolizer_new(NULL, 0, NULL);
	struct symmod *m = open_module(s, "progxx", NULL, 0);
	struct symframe f[MAXF];
	uint64_t lo, size;

	CHECK(m != NULL);
	if (m && func_range("progxx", "_ZN2ns6Widget4spinEi", &lo, &size) == 0) {
		int n = symmod_lookup(m, lo + size / 2, f, MAXF);
		CHECK(n >= 1 && strcmp(f[n - 1].name, "ns::Widget::spin(int)") == 0);
		CHECK(n >= 1 && strcmp(f[n - 1].system_name, "_ZN2ns6Widget4spinEi") == 0);
		CHECK(n >= 1 && f[n - 1].start_line == 6);
	} else {
		CHECK(!"ns::Widget::spin not found");
	}
	if (m && func_range("progxx", "_ZN2ns5twirlIlEET_S1_", &lo, &size) == 0) {
		int n = symmod_lookup(m, lo, f, MAXF);
		CHECK(n >= 1 && strcmp(f[n - 1].name, "long ns::twirl<long>(long)") == 0);
	} else {
		CHECK(!"ns::twirl<long> not found");
	}
	symbolizer_free(s);
}

static void test_demangle(void)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "_ZN2ns3fooEi", "ns::foo(int)" },
		{ "_ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write" },
		{ "_ZN3std2rt10lang_start17h7cbe59aa5d04a4b4E", "std::rt::lang_start" },
		{ "_RNvCs1234_7mycrate3foo", "mycrate::foo" },
		{ "main", NULL },
		{ "_Zgarbage", NULL },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *d = sym_demangle(cases[i].in);
		CHECK(cases[i].out ? d && strcmp(d, cases[i].out) == 0 : d == NULL);
		free(d);
	}
}

/* Truncated and bit-flipped copies: opening and looking up must not crash. */
static void test_corrupt(void)
{
	struct stat st;
	char path[512];
	uint64_t lo, size;

	snprintf(path, sizeof(path), "%s/prog", dir);
	if (stat(path, &st) < 0 || func_range("prog", "compute", &lo, &size) < 0) {
		CHECK(!"prog missing");
		return;
	}
	srand(7);
	for (int k = 0; k < 40; k++) {
		long cut = k < 20 ? st.st_size * k / 20 : st.st_size;
		CHECK(run("cd %s && head -c %ld prog > bad", dir, cut) == 0);
		if (k >= 20) {	/* flip bytes in the ELF and section headers and DWARF */
			snprintf(path, sizeof(path), "%s/bad", dir);
			int fd = open(path, O_WRONLY);
			for (int j = 0; fd >= 0 && j < 64; j++) {
				unsigned char c = (unsigned char)rand();
				off_t off = k % 2 ? rand() % 64 : rand() % st.st_size;
				if (pwrite(fd, &c, 1, k % 3 ? st.st_size - 1 - off % st.st_size : off) < 0)
					break;
			}
			if (fd >= 0)
				close(fd);
		}
		struct symbolizer *s = symbolizer_new(NULL, 0, NULL);
		struct symmod *m = open_module(s, "bad", NULL, 0);
		struct symframe f[MAXF];
		for (uint64_t a = lo - 64; m && a < lo + size + 64; a++)
			symmod_lookup(m, a, f, MAXF);
		symbolizer_free(s);
		passed++;
	}
}

/* Frames of one lookup as text, to compare two lookups. */
static void frames_text(struct symmod *m, uint64_t a, char *out, size_t len)
{
	struct symframe f[MAXF];
	int n = symmod_lookup(m, a, f, MAXF);
	size_t o = (size_t)snprintf(out, len, "%d", n);

	for (int i = 0; i < n && o < len; i++)
		o += (size_t)snprintf(out + o, len - o, "|%s|%s|%s:%u|%u", f[i].name,
				      f[i].system_name, f[i].file ? f[i].file : "-", f[i].line,
				      f[i].start_line);
}

/* The addresses of the defined functions nm lists for path (nm_opts "-D" for .dynsym). */
static size_t func_addrs(const char *nm_opts, const char *path, uint64_t *v, size_t max)
{
	char cmd[1024], line[512];
	size_t n = 0;

	snprintf(cmd, sizeof(cmd), "nm %s --defined-only -S '%s' 2>/dev/null", nm_opts, path);
	FILE *p = popen(cmd, "r");
	while (p && fgets(line, sizeof(line), p)) {
		unsigned long long a, sz;
		char type;
		if (sscanf(line, "%llx %llx %c", &a, &sz, &type) == 3 && (type == 'T' || type == 't' ||
		    type == 'W' || type == 'i') && n + 2 <= max) {
			v[n++] = a;
			v[n++] = a + sz / 2;
		}
	}
	if (p)
		pclose(p);
	return n;
}

/* Compilation units are indexed when a lookup first falls in them: the answers must not
 * depend on the order that happens in.  Two symbolizers look up the same addresses, one
 * from the lowest up and one from the highest down, so their units are indexed and merged
 * in opposite orders. */
static void lazy_order(const char *path, const char *nm_opts)
{
	enum { MAX = 40000 };
	static uint64_t v[MAX];
	static char a[MAX / 8][512];
	size_t n = func_addrs(nm_opts, path, v, MAX), step = n / (MAX / 8) + 1, k = 0;
	struct symbolizer *up = symbolizer_new(NULL, 0, NULL), *down = symbolizer_new(NULL, 0, NULL);
	struct symmod *mu = symbolizer_module(up, path, NULL, 0);
	struct symmod *md = symbolizer_module(down, path, NULL, 0);
	int differ = 0, named = 0;
	char b[512];

	CHECK(n > 0 && mu && md && symmod_has_dwarf(mu));
	for (size_t i = 0; mu && md && i < n; i += step, k++) {
		frames_text(mu, v[i], a[k], sizeof(a[k]));
		named += a[k][0] != '0';
	}
	for (size_t i = (k - 1) * step; mu && md && k > 0; i -= step) {
		frames_text(md, v[i], b, sizeof(b));
		differ += strcmp(a[--k], b) != 0;
		if (i < step)
			break;
	}
	CHECK(named > 0);
	CHECK(differ == 0);
	symbolizer_free(up);
	symbolizer_free(down);
}

static void test_lazy_order(void)
{
	static const char unit_c[] =
		"static inline __attribute__((always_inline)) int f%d_in(int x) { return x * %d; }\n"
		"__attribute__((noinline)) int f%d(int x) { return f%d_in(x) + %d; }\n";
	char path[512], name[64], text[512];

	for (int i = 0; i < 6; i++) {
		snprintf(name, sizeof(name), "unit%d.c", i);
		snprintf(text, sizeof(text), unit_c, i, i + 2, i, i, i);
		write_file(name, text);
	}
	write_file("units_main.c", "int f0(int), f5(int);\n"
		   "int main(int c, char **v) { (void)v; return f0(c) + f5(c); }\n");
	CHECK(run("cd %s && cc -g -O2 -o units units_main.c unit0.c unit1.c unit2.c unit3.c "
		  "unit4.c unit5.c", dir) == 0);
	snprintf(path, sizeof(path), "%s/units", dir);
	lazy_order(path, "");
	/* A distribution's debug file of thousands of units, where installed (libc6-dbg). */
	if (access("/lib/x86_64-linux-gnu/libc.so.6", R_OK) == 0 &&
	    access("/usr/lib/debug/.build-id", R_OK) == 0)
		lazy_order("/lib/x86_64-linux-gnu/libc.so.6", "-D");
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 2;
	}
	write_file("prog.c", prog_c);
	if (run("cd %s && cc -g -O2 -o prog prog.c", dir) != 0) {
		fprintf(stderr, "cannot compile the fixture\n");
		return 2;
	}
	test_embedded();
	test_debuglink();
	test_build_id_tree();
	test_symtab_only();
	test_cplusplus();
	test_demangle();
	test_corrupt();
	test_lazy_order();
	if (!getenv("KEEP_FIXTURES"))
		run("rm -rf '%s'", dir);
	printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
	return failed ? 1 : 0;
}
