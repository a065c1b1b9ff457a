/* parse_duration: the humantime grammar of every --duration, --window and
 * --event-reorder-window (terms, whitespace, the unit table, zero, overflow), and the one-line
 * errors of bad values. */
#include <stdio.h>
#include <string.h>

#include "parse.h"

#include "check.h"

#define S 1000000000ull
#define MIN (60 * S)
#define HOUR (3600 * S)
#define DAY (86400 * S)

/* 1 when s parses to exactly want. */
static int
is(const char *s, uint64_t want)
{
	char err[256] = "";
	uint64_t v = 12345;
	int rc = parse_duration(s, &v, err, sizeof(err));
	if (rc != 0 || v != want)
		fprintf(stderr, "'%s': rc %d, %llu ns, want %llu (%s)\n", s, rc,
			(unsigned long long)v, (unsigned long long)want, err);
	return rc == 0 && v == want;
}

/* 1 when s is refused with one line that contains what and leaves the value alone. */
static int
refused(const char *s, const char *what)
{
	char err[256] = "";
	uint64_t v = 12345;
	int rc = parse_duration(s, &v, err, sizeof(err));
	int ok = rc == -1 && v == 12345 && err[0] && !strchr(err, '\n') && strstr(err, what);
	if (!ok)
		fprintf(stderr, "'%s': rc %d, %llu ns, error '%s', want '%s'\n", s, rc,
			(unsigned long long)v, err, what);
	return ok;
}

static void
test_units(void)
{
	CHECK(is("17nsec", 17) && is("17nanos", 17) && is("33ns", 33));
	CHECK(is("3usec", 3000) && is("78us", 78000) && is("163\xc2\xb5s", 163000));
	CHECK(is("500us", 500000));
	CHECK(is("31msec", 31000000) && is("31millis", 31000000) && is("6ms", 6000000));
	CHECK(is("10s", 10 * S) && is("300sec", 300 * S) && is("300secs", 300 * S));
	CHECK(is("50seconds", 50 * S) && is("1second", S));
	CHECK(is("100m", 100 * MIN) && is("12min", 12 * MIN) && is("12mins", 12 * MIN));
	CHECK(is("1minute", MIN) && is("7minutes", 7 * MIN));
	CHECK(is("2h", 2 * HOUR) && is("7hr", 7 * HOUR) && is("7hrs", 7 * HOUR));
	CHECK(is("1hour", HOUR) && is("24hours", 24 * HOUR));
	CHECK(is("1day", DAY) && is("2days", 2 * DAY) && is("365d", 365 * DAY));
	CHECK(is("1w", 7 * DAY) && is("1week", 7 * DAY) && is("7weeks", 49 * DAY));
	CHECK(is("100wk", 700 * DAY) && is("104wks", 728 * DAY));
	/* Months are 30.44 days and years 365.25, as humantime counts them. */
	CHECK(is("1month", 2630016 * S) && is("3months", 3 * 2630016 * S));
	CHECK(is("12M", 31560192 * S));
	CHECK(is("1year", 31557600 * S) && is("7years", 7 * 31557600 * S));
	CHECK(is("10yr", 10 * 31557600 * S) && is("15yrs", 15 * 31557600 * S));
	CHECK(is("17y", 536479200 * S));
}

static void
test_terms(void)
{
	CHECK(is("1h30m", HOUR + 30 * MIN));
	CHECK(is("1h 30m", HOUR + 30 * MIN));
	CHECK(is("2h 37min", 2 * HOUR + 37 * MIN));
	CHECK(is("20 min 17 nsec ", 20 * MIN + 17));
	CHECK(is("  5s", 5 * S) && is("5 s", 5 * S) && is("5s\t", 5 * S));
	CHECK(is("1d2h3m4s5ms6us7ns", DAY + 2 * HOUR + 3 * MIN + 4 * S + 5000000 + 6000 + 7));
	/* A repeated unit adds up. */
	CHECK(is("1s 1s", 2 * S));
	/* Whitespace inside the number is skipped, as the crate does. */
	CHECK(is("1 0s", 10 * S));
	/* Zero: a bare 0 (any run of zeros) is no deadline; 0 with a unit is zero too. */
	CHECK(is("0", 0) && is("000", 0) && is("0s", 0) && is("0h 0m", 0));
}

static void
test_errors(void)
{
	CHECK(refused("", "empty duration") && refused("   ", "empty duration"));
	CHECK(refused(NULL, "empty duration"));
	CHECK(refused("10", "time unit needed, for example 10s or 10ms"));
	CHECK(refused("10 months 1", "time unit needed"));
	CHECK(refused("1x", "unknown unit 'x'"));
	CHECK(refused("1 hours min", "expected a number"));
	CHECK(refused("1S", "unknown unit 'S'")); /* units are case sensitive */
	CHECK(refused("1mS", "unknown unit 'mS'"));
	CHECK(refused("m", "expected a number") && refused("-1s", "expected a number"));
	CHECK(refused("1.5s", "unexpected character at offset 1"));
	CHECK(refused("1s,2s", "unexpected character at offset 2"));
	CHECK(refused("1s.", "unexpected character"));
	CHECK(refused("1\xce\xbcs", "unexpected character")); /* Greek mu is not the micro sign */
	/* Overflow: of the number, of one term and of the sum; UINT64_MAX ns is about 584y. */
	CHECK(refused("100000000000000000000ns", "number too large"));
	CHECK(is("18446744073709551615ns", UINT64_MAX));
	CHECK(refused("18446744073709551616ns", "number too large"));
	CHECK(refused("18446744073709551615ns 1ns", "too long"));
	CHECK(refused("18446744074s", "too long"));
	CHECK(refused("585y", "too long") && is("584y", 584ull * 31557600 * S));
	CHECK(refused("213503d 1d", "too long"));
	CHECK(refused("100000000000000000d", "too long"));
	/* The error names the value as given. */
	CHECK(refused("1h 2q", "invalid duration '1h 2q': unknown unit 'q'"));
}

/* --alloc-interval's byte sizes: plain bytes, decimal and binary units, a fraction. */
static void
test_bytes(void)
{
	uint64_t v;
	char err[160];
	CHECK(parse_bytes("4096", 1, 1ull << 40, &v, err, sizeof(err)) == 0 && v == 4096);
	CHECK(parse_bytes("512KiB", 1, 1ull << 40, &v, err, sizeof(err)) == 0 && v == 524288);
	CHECK(parse_bytes("512 kib", 1, 1ull << 40, &v, err, sizeof(err)) == 0 && v == 524288);
	CHECK(parse_bytes("1.5 MiB", 1, 1ull << 40, &v, err, sizeof(err)) == 0 && v == 1572864);
	CHECK(parse_bytes("2MB", 1, 1ull << 40, &v, err, sizeof(err)) == 0 && v == 2000000);
	CHECK(parse_bytes("1k", 1, 1ull << 40, &v, err, sizeof(err)) == 0 && v == 1000);
	CHECK(parse_bytes("0", 1, 1ull << 40, &v, err, sizeof(err)) < 0);
	CHECK(parse_bytes("0.5", 1, 1ull << 40, &v, err, sizeof(err)) < 0);
	CHECK(parse_bytes("12 parsecs", 1, 1ull << 40, &v, err, sizeof(err)) < 0 &&
	      strstr(err, "unknown unit"));
	CHECK(parse_bytes("KiB", 1, 1ull << 40, &v, err, sizeof(err)) < 0);
	CHECK(parse_bytes("-5", 1, 1ull << 40, &v, err, sizeof(err)) < 0);
	CHECK(parse_bytes("2TiB", 1, 1ull << 40, &v, err, sizeof(err)) < 0);
}

int
main(void)
{
	test_bytes();
	test_units();
	test_terms();
	test_errors();
	printf("parse_test: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
