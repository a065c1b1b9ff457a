/* CPU lists (cpulist.h). */
#include "cpulist.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void
cpulist_add(struct cpulist *l, int cpu)
{
	if (cpu < 0 || cpu >= CPULIST_MAX || cpulist_has(l, cpu))
		return;
	l->bits[cpu / 64] |= 1ull << (cpu % 64);
	l->n++;
}

int
cpulist_has(const struct cpulist *l, int cpu)
{
	return cpu >= 0 && cpu < CPULIST_MAX && (l->bits[cpu / 64] >> (cpu % 64) & 1);
}

/* A CPU number at *s: digits only (no sign, no space), below CPULIST_MAX. */
static int
number(const char **s, long *v, char *err, size_t errlen)
{
	const char *p = *s;
	if (!isdigit((unsigned char)*p)) {
		snprintf(err, errlen, "expected a CPU number at '%.20s'", p);
		return -1;
	}
	errno = 0;
	char *end;
	*v = strtol(p, &end, 10);
	if (errno || *v >= CPULIST_MAX) {
		snprintf(err, errlen, "CPU %.20s is above the highest supported, %d", p,
			 CPULIST_MAX - 1);
		return -1;
	}
	*s = end;
	return 0;
}

int
cpulist_parse(const char *s, struct cpulist *l, char *err, size_t errlen)
{
	memset(l, 0, sizeof(*l));
	size_t len = strlen(s);
	if (len && s[len - 1] == '\n')
		len--;
	if (len == 0) {
		snprintf(err, errlen, "empty CPU list");
		return -1;
	}
	const char *p = s, *stop = s + len;
	for (;;) {
		long a, b;
		if (number(&p, &a, err, errlen) < 0)
			return -1;
		b = a;
		if (*p == '-') {
			p++;
			if (number(&p, &b, err, errlen) < 0)
				return -1;
			if (b < a) {
				snprintf(err, errlen, "reversed range %ld-%ld", a, b);
				return -1;
			}
		}
		for (long c = a; c <= b; c++)
			cpulist_add(l, (int)c);
		if (p == stop)
			return 0;
		if (*p != ',' || p + 1 == stop) {
			snprintf(err, errlen, "unexpected '%.20s' in the CPU list", p);
			return -1;
		}
		p++;
	}
}

int
cpulist_read(const char *path, struct cpulist *l, char *err, size_t errlen)
{
	char buf[8192] = "", why[200];
	FILE *f = fopen(path, "re");
	if (!f) {
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	if (cpulist_parse(buf, l, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "%s: %s", path, why);
		return -1;
	}
	return 0;
}

int
cpulist_first_missing(const struct cpulist *sub, const struct cpulist *set)
{
	for (int c = 0; c < CPULIST_MAX; c++)
		if (cpulist_has(sub, c) && !cpulist_has(set, c))
			return c;
	return -1;
}

void
cpulist_format(const struct cpulist *l, char *out, size_t size)
{
	size_t used = 0;
	if (size)
		out[0] = 0;
	for (int c = 0; c < CPULIST_MAX; c++) {
		if (!cpulist_has(l, c))
			continue;
		int e = c;
		while (e + 1 < CPULIST_MAX && cpulist_has(l, e + 1))
			e++;
		int n = e > c ? snprintf(out + used, size - used, "%s%d-%d", used ? "," : "", c, e)
			      : snprintf(out + used, size - used, "%s%d", used ? "," : "", c);
		if (n < 0 || (size_t)n >= size - used)
			return;
		used += (size_t)n;
		c = e;
	}
}
