/*
 * jslbdecode [--table] FILE: checks a JSLB container (gzip-compressed or not) and writes the
 * JSON document it encodes on stdout.  The Firefox tests compare that with the JSON output
 * of the same window, byte for byte.  --table prints the header and slab table instead,
 * read straight from the bytes, so a test can check them on its own:
 *
 *   jslbdecode firefox-...-000000-....jslb.gz > profile.json
 *   jslbdecode --table firefox-...jslb.gz
 *   version 1 slabs 7 root 6
 *   slab 0 type 4 offset 104 length 48
 *
 * Built by tests/emit_firefox.bats against librp.a.
 */
#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "jslb.h"

#define INPUT_CAP (512u << 20)  /* the serve limits: 512 MiB in, 128 MiB decoded... */
#define OUTPUT_CAP (1u << 30)   /* ...but a test may decode more */

static uint32_t
le32(const unsigned char *p)
{
	return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The header and table as stored; only bounds are checked here, the rest is the test's. */
static void
print_table(const unsigned char *buf, size_t len)
{
	uint32_t n;

	if (len < JSLB_HEADER_SIZE)
		errx(1, "shorter than a jslb header");
	n = le32(buf + 12);
	printf("version %u slabs %u root %u\n", le32(buf + 8), n, le32(buf + 16));
	if (n > (len - JSLB_HEADER_SIZE) / JSLB_SLAB_ENTRY)
		errx(1, "slab table passes the end of the file");
	for (uint32_t i = 0; i < n; i++) {
		const unsigned char *e = buf + JSLB_HEADER_SIZE + (size_t)JSLB_SLAB_ENTRY * i;
		printf("slab %u type %u offset %u length %u\n", i, le32(e), le32(e + 4),
		       le32(e + 8));
	}
	printf("size %zu\n", len);
}

int
main(int argc, char **argv)
{
	int table = argc == 3 && !strcmp(argv[1], "--table");
	gzFile in;
	unsigned char *buf = NULL;
	size_t len = 0, cap = 0;
	char why[200];
	int n;

	if (argc != 2 + table) {
		fprintf(stderr, "usage: jslbdecode [--table] FILE\n");
		return 2;
	}
	argv += table;
	if (!(in = gzopen(argv[1], "rb")))
		err(1, "cannot open '%s'", argv[1]);
	do {
		if (len == cap) {
			cap = cap ? 2 * cap : 1 << 20;
			if (cap > INPUT_CAP || !(buf = realloc(buf, cap)))
				errx(1, "'%s': too large", argv[1]);
		}
		n = gzread(in, buf + len, (unsigned)(cap - len));
		if (n < 0)
			errx(1, "cannot read '%s': %s", argv[1], gzerror(in, &n));
		len += (size_t)n;
	} while (n > 0);
	gzclose(in);
	if (table)
		print_table(buf, len);
	else if (jslb_decode(buf, len, stdout, OUTPUT_CAP, why, sizeof(why)) < 0)
		errx(1, "'%s': %s", argv[1], why);
	free(buf);
	if (fflush(stdout) != 0)
		err(1, "stdout");
	return 0;
}
