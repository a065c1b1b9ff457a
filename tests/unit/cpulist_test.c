/* cpulist: the kernel's CPU list notation of --cpuid and /sys/devices/system/cpu/online,
 * its canonical text, and the one-line errors of bad lists. */
#include <string.h>

#include "cpulist.h"

#include "check.h"

static int
refused(const char *s, const char *what)
{
	struct cpulist l;
	char err[200] = "";
	int rc = cpulist_parse(s, &l, err, sizeof(err));
	if (rc == 0 || !strstr(err, what) || strchr(err, '\n'))
		fprintf(stderr, "'%s': rc %d, '%s', want '%s'\n", s, rc, err, what);
	return rc == -1 && strstr(err, what) && !strchr(err, '\n');
}

static int
canonical(const char *s, const char *want, int n)
{
	struct cpulist l;
	char err[200] = "", text[200];
	if (cpulist_parse(s, &l, err, sizeof(err)) < 0) {
		fprintf(stderr, "'%s': %s\n", s, err);
		return 0;
	}
	cpulist_format(&l, text, sizeof(text));
	if (strcmp(text, want) != 0 || l.n != n)
		fprintf(stderr, "'%s': '%s' (%d), want '%s' (%d)\n", s, text, l.n, want, n);
	return strcmp(text, want) == 0 && l.n == n;
}

int
main(void)
{
	CHECK(canonical("2,4-7", "2,4-7", 5));
	CHECK(canonical("0", "0", 1));
	CHECK(canonical("0-1\n", "0-1", 2));
	CHECK(canonical("7,5,6,2,4", "2,4-7", 5));
	CHECK(canonical("3-3,3", "3", 1));
	CHECK(canonical("4095", "4095", 1));
	CHECK(canonical("0-63,64", "0-64", 65));
	CHECK(refused("", "empty"));
	CHECK(refused("\n", "empty"));
	CHECK(refused("5-2", "reversed range 5-2"));
	CHECK(refused("a", "expected a CPU number"));
	CHECK(refused("1,,2", "expected a CPU number"));
	CHECK(refused("1,", "unexpected"));
	CHECK(refused("1-", "expected a CPU number"));
	CHECK(refused("-1", "expected a CPU number"));
	CHECK(refused(" 1", "expected a CPU number"));
	CHECK(refused("1 ", "unexpected"));
	CHECK(refused("1x", "unexpected"));
	CHECK(refused("4096", "above the highest"));
	CHECK(refused("99999999999999999999", "above the highest"));

	struct cpulist a, b;
	char err[100];
	CHECK(cpulist_parse("1,3", &a, err, sizeof(err)) == 0);
	CHECK(cpulist_parse("0-2", &b, err, sizeof(err)) == 0);
	CHECK(cpulist_first_missing(&a, &b) == 3);
	CHECK(cpulist_first_missing(&b, &b) == -1);
	CHECK(cpulist_has(&a, 1) && !cpulist_has(&a, 2) && !cpulist_has(&a, -1));
	char small[4];
	cpulist_format(&b, small, sizeof(small));
	CHECK(strcmp(small, "0-2") == 0);
	cpulist_format(&a, small, 3);
	CHECK(strlen(small) < 3);

	printf("cpulist: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
