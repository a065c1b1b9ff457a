/* symbolize_driver: the symbolizer as a command, for bench/symbolize.sh and debugging.
 *
 * USAGE: symbolize_driver [-d SYMDIR]... [-q] ELF < addresses
 * Reads one hexadecimal ELF virtual address per line ("0x401136" or "401136") and prints,
 * like `llvm-symbolizer --obj ELF`, one "name\nfile:line" pair per frame, innermost first,
 * and an empty line after each address:
 *     inlined_helper
 *     /tmp/x.c:12
 *     main
 *     /tmp/x.c:30
 * -q prints nothing (times indexing and lookups alone).
 */
#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../unwind/symbolize.h"

#define MAX_DIRS 16
#define MAX_FRAMES 64	/* deeper inline chains than compilers produce */

int main(int argc, char **argv)
{
	const char *dirs[MAX_DIRS];
	size_t ndirs = 0;
	int quiet = 0, c;
	char buf[256];

	while ((c = getopt(argc, argv, "d:qh")) != -1) {
		if (c == 'd' && ndirs < MAX_DIRS)
			dirs[ndirs++] = optarg;
		else if (c == 'q')
			quiet = 1;
		else
			errx(c == 'h' ? 0 : 1, "usage: symbolize_driver [-d SYMDIR]... [-q] ELF < addresses");
	}
	if (optind != argc - 1)
		errx(1, "usage: symbolize_driver [-d SYMDIR]... [-q] ELF < addresses");
	struct symbolizer *s = symbolizer_new(dirs, ndirs, NULL);
	if (!s)
		errx(1, "out of memory");
	struct symmod *m = symbolizer_module(s, argv[optind], NULL, 0);
	if (!m)
		errx(1, "%s", symbolizer_error(s));
	while (fgets(buf, sizeof(buf), stdin)) {
		struct symframe f[MAX_FRAMES];
		int n = symmod_lookup(m, strtoull(buf, NULL, 16), f, MAX_FRAMES);
		if (quiet)
			continue;
		for (int i = 0; i < n; i++)
			printf("%s\n%s:%u\n", f[i].name, f[i].file ? f[i].file : "??", f[i].line);
		if (n == 0)
			fputs("??\n??:0\n", stdout);
		putchar('\n');
	}
	symbolizer_free(s);
	return ferror(stdout) ? 1 : 0;
}
