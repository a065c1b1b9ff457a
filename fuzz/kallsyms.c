/* libFuzzer target: collect's /proc/kallsyms reader and lookup (ksyms.c) on arbitrary text,
 * read from a file as collect reads it.  The table must come out sorted, one symbol per
 * address, each ending where the next starts, and every lookup must land in its symbol. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../collect/ksyms.h"

static char path[64];

static void
remove_input(void)
{
	unlink(path);
}

static void
check_find(struct ksyms *k, uint64_t ip)
{
	struct ksym *s = ksyms_find(k, ip);
	if (s && (ip < s->start || ip >= s->end))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ksyms k;

	if (!path[0]) {
		snprintf(path, sizeof(path), "/tmp/fuzz-kallsyms.%d", (int)getpid());
		atexit(remove_input);
	}
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
		abort();
	if (ksyms_load(&k, path) < 0)
		return 0;
	for (size_t i = 0; i < k.tab.n; i++) {
		const struct ksym *s = &k.tab.v[i];
		if (i && s->start <= k.tab.v[i - 1].start)
			abort();
		if (!s->name || !s->module || strlen(s->name) == 0)
			abort();
		check_find(&k, s->start);
		check_find(&k, s->end - 1);
		check_find(&k, s->start - 1);
	}
	check_find(&k, 0);
	check_find(&k, UINT64_MAX);
	ksyms_free(&k);
	return 0;
}
