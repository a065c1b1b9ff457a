#include "bpflog.h"

#include <bpf/libbpf.h>
#include <err.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static char last[200];
static int loud;

static int
print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char line[sizeof(last)];
	vsnprintf(line, sizeof(line), fmt, ap);
	line[strcspn(line, "\n")] = 0;
	if (loud && line[0])
		warnx("libbpf: %s", line);
	if (level == LIBBPF_WARN && line[0])
		memcpy(last, line, sizeof(line));
	return 0;
}

void
bpflog_reset(int verbose)
{
	last[0] = 0;
	loud = verbose;
	libbpf_set_print(print);
}

const char *
bpflog_last(void)
{
	return last;
}
