#include "parse.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define SEC 1000000000ull

/* The unit words of the Rust humantime crate, whose grammar the manual's durations follow.
 * A unit is matched whole and case matters: "M" is months, "m" minutes. */
static const struct {
	const char *name;
	uint64_t ns;
} units[] = {
	{ "nanos", 1 }, { "nsec", 1 }, { "ns", 1 },
	{ "usec", 1000 }, { "us", 1000 }, { "\xc2\xb5s", 1000 }, /* µs, U+00B5 */
	{ "millis", 1000000 }, { "msec", 1000000 }, { "ms", 1000000 },
	{ "seconds", SEC }, { "second", SEC }, { "secs", SEC }, { "sec", SEC }, { "s", SEC },
	{ "minutes", 60 * SEC }, { "minute", 60 * SEC }, { "mins", 60 * SEC },
	{ "min", 60 * SEC }, { "m", 60 * SEC },
	{ "hours", 3600 * SEC }, { "hour", 3600 * SEC }, { "hrs", 3600 * SEC },
	{ "hr", 3600 * SEC }, { "h", 3600 * SEC },
	{ "days", 86400 * SEC }, { "day", 86400 * SEC }, { "d", 86400 * SEC },
	{ "weeks", 604800 * SEC }, { "week", 604800 * SEC }, { "wks", 604800 * SEC },
	{ "wk", 604800 * SEC }, { "w", 604800 * SEC },
	/* 30.44 and 365.25 days, as humantime counts them */
	{ "months", 2630016 * SEC }, { "month", 2630016 * SEC }, { "M", 2630016 * SEC },
	{ "years", 31557600 * SEC }, { "year", 31557600 * SEC }, { "yrs", 31557600 * SEC },
	{ "yr", 31557600 * SEC }, { "y", 31557600 * SEC },
};

/* Bytes of the unit character at p: an ASCII letter or µ (U+00B5); 0 for anything else. */
static size_t
unit_char(const char *p)
{
	if (isalpha((unsigned char)*p))
		return 1;
	return (unsigned char)p[0] == 0xc2 && (unsigned char)p[1] == 0xb5 ? 2 : 0;
}

static int
bad(char *err, size_t errlen, const char *s, const char *why, size_t off)
{
	snprintf(err, errlen, "invalid duration '%s': %s at offset %zu", s, why, off);
	return -1;
}

/*
 * humantime's grammar: terms of a number and a unit, "1h30m" or "1h 30m".  Whitespace may
 * surround a term, stand between its number and unit, and even inside the number ("1 0s" is
 * ten seconds, as the crate reads it).  A term ends at the first character after its unit's
 * letters, which must be whitespace or the digit of the next term.  "0" (any run of zeros)
 * alone is zero without a unit.
 */
int
parse_duration(const char *s, uint64_t *ns, char *err, size_t errlen)
{
	uint64_t total = 0;
	const char *p;

	if (!s)
		s = "";
	p = s + strspn(s, " \t\n\v\f\r");
	if (!*p) {
		snprintf(err, errlen, "empty duration");
		return -1;
	}
	if (strspn(s, "0") == strlen(s)) {
		*ns = 0;
		return 0;
	}
	while (*p) {
		uint64_t n = 0;
		if (!isdigit((unsigned char)*p))
			return bad(err, errlen, s, "expected a number", (size_t)(p - s));
		for (; isdigit((unsigned char)*p) || isspace((unsigned char)*p); p++) {
			if (isspace((unsigned char)*p))
				continue;
			unsigned d = (unsigned)(*p - '0');
			if (n > (UINT64_MAX - d) / 10) {
				snprintf(err, errlen, "invalid duration '%s': number too large", s);
				return -1;
			}
			n = n * 10 + d;
		}
		const char *u = p;
		for (size_t k; (k = unit_char(p)) != 0; p += k)
			;
		if (p == u && *p)
			return bad(err, errlen, s, "unexpected character", (size_t)(p - s));
		if (p == u) {
			snprintf(err, errlen, "invalid duration '%s': time unit needed, for example "
				 "%llus or %llums", s, (unsigned long long)n, (unsigned long long)n);
			return -1;
		}
		size_t i, len = (size_t)(p - u);
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (strlen(units[i].name) == len && memcmp(units[i].name, u, len) == 0)
				break;
		if (i == sizeof(units) / sizeof(units[0])) {
			snprintf(err, errlen, "invalid duration '%s': unknown unit '%.*s' (ns, us, "
				 "ms, s, m, h, d, w, M, y and their long forms)", s, (int)len, u);
			return -1;
		}
		if (n > UINT64_MAX / units[i].ns || total > UINT64_MAX - n * units[i].ns) {
			snprintf(err, errlen, "invalid duration '%s': too long (at most about 584 "
				 "years)", s);
			return -1;
		}
		total += n * units[i].ns;
		if (isspace((unsigned char)*p))
			p += strspn(p, " \t\n\v\f\r");
		else if (*p && !isdigit((unsigned char)*p))
			return bad(err, errlen, s, "unexpected character", (size_t)(p - s));
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

/* The byte-size units, case aside: decimal (k = 1000) and binary (ki = 1024). */
static const struct {
	const char *name;
	uint64_t mult;
} byte_units[] = {
	{ "", 1 }, { "b", 1 },
	{ "k", 1000ull }, { "kb", 1000ull }, { "ki", 1ull << 10 }, { "kib", 1ull << 10 },
	{ "m", 1000000ull }, { "mb", 1000000ull }, { "mi", 1ull << 20 }, { "mib", 1ull << 20 },
	{ "g", 1000000000ull }, { "gb", 1000000000ull }, { "gi", 1ull << 30 },
	{ "gib", 1ull << 30 },
	{ "t", 1000000000000ull }, { "tb", 1000000000000ull }, { "ti", 1ull << 40 },
	{ "tib", 1ull << 40 },
};

int
parse_bytes(const char *s, uint64_t min, uint64_t max, uint64_t *out, char *err,
	    size_t errlen)
{
	char *end;
	if (!s || !isdigit((unsigned char)*s)) {
		snprintf(err, errlen, "'%s' is not a byte size (4096, 512KiB, 1.5 MiB)", s ? s : "");
		return -1;
	}
	errno = 0;
	long double v = strtold(s, &end);
	if (errno || end == s) {
		snprintf(err, errlen, "'%s' is not a byte size (4096, 512KiB, 1.5 MiB)", s);
		return -1;
	}
	end += strspn(end, " \t");
	size_t i = 0, n = sizeof(byte_units) / sizeof(byte_units[0]);
	while (i < n && strcasecmp(end, byte_units[i].name) != 0)
		i++;
	if (i == n) {
		snprintf(err, errlen, "'%s': unknown unit '%s' (B, KB, KiB, MB, MiB, GB, GiB, TB, "
			 "TiB)", s, end);
		return -1;
	}
	long double b = v * (long double)byte_units[i].mult;
	if (b != b || b < (long double)min || b > (long double)max ||
	    b != (long double)(uint64_t)b) {
		snprintf(err, errlen, "%s is out of range %llu..%llu bytes, or not whole bytes", s,
			 (unsigned long long)min, (unsigned long long)max);
		return -1;
	}
	*out = (uint64_t)b;
	return 0;
}
