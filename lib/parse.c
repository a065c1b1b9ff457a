#include "parse.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *name;
	uint64_t ns;
} units[] = {
	/* Longest names first so that "ms" is not read as "m" followed by junk. */
	{ "nsec", 1 }, { "ns", 1 },
	{ "usec", 1000 }, { "us", 1000 },
	{ "msec", 1000000 }, { "millis", 1000000 }, { "ms", 1000000 },
	{ "seconds", 1000000000ull }, { "second", 1000000000ull }, { "secs", 1000000000ull },
	{ "sec", 1000000000ull }, { "s", 1000000000ull },
	{ "minutes", 60000000000ull }, { "minute", 60000000000ull }, { "mins", 60000000000ull },
	{ "min", 60000000000ull }, { "m", 60000000000ull },
	{ "hours", 3600000000000ull }, { "hour", 3600000000000ull }, { "hrs", 3600000000000ull },
	{ "hr", 3600000000000ull }, { "h", 3600000000000ull },
	{ "days", 86400000000000ull }, { "day", 86400000000000ull }, { "d", 86400000000000ull },
};

int
parse_duration(const char *s, uint64_t *ns, char *err, size_t errlen)
{
	uint64_t total = 0;
	const char *p = s;

	if (!s || !*s) {
		snprintf(err, errlen, "empty duration");
		return -1;
	}
	if (strcmp(s, "0") == 0) {
		*ns = 0;
		return 0;
	}
	while (*p) {
		while (*p == ' ')
			p++;
		if (!isdigit((unsigned char)*p)) {
			snprintf(err, errlen, "invalid duration '%s': expected a number", s);
			return -1;
		}
		errno = 0;
		char *end;
		unsigned long long n = strtoull(p, &end, 10);
		if (errno) {
			snprintf(err, errlen, "invalid duration '%s': number too large", s);
			return -1;
		}
		p = end;
		while (*p == ' ')
			p++;
		size_t i, k = 0;
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
			k = strlen(units[i].name);
			if (strncmp(p, units[i].name, k) == 0 && !isalpha((unsigned char)p[k]))
				break;
		}
		if (i == sizeof(units) / sizeof(units[0])) {
			snprintf(err, errlen, "invalid duration '%s': missing or unknown unit "
				 "(use ns, us, ms, s, m, h or d)", s);
			return -1;
		}
		if (n > UINT64_MAX / units[i].ns || total + n * units[i].ns < total) {
			snprintf(err, errlen, "invalid duration '%s': too long", s);
			return -1;
		}
		total += n * units[i].ns;
		p += k;
	}
	*ns = total;
	return 0;
}

int
parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out, char *err, size_t errlen)
{
	char *end;

	if (!s || !isdigit((unsigned char)*s)) {
		snprintf(err, errlen, "'%s' is not a number", s ? s : "");
		return -1;
	}
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end) {
		snprintf(err, errlen, "'%s' is not a number", s);
		return -1;
	}
	if (v < min || v > max) {
		snprintf(err, errlen, "%s is out of range %llu..%llu", s,
			 (unsigned long long)min, (unsigned long long)max);
		return -1;
	}
	*out = v;
	return 0;
}
