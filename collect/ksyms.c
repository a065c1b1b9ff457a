/* Kernel symbols: the kernel's lookup of each address met, else the /proc/kallsyms table. */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grow.h"
#include "ksymbpf.h"
#include "ksyms.h"

#define FIRST_READ 4096         /* enough for the first line, which tells hidden addresses */
#define READ_CHUNK (1 << 20)    /* kallsyms costs per read call as much as per byte */

/* Appends up to want bytes of the file to k->text; 0 at its end, -1 on error. */
static ssize_t
read_more(struct ksyms *k, size_t want)
{
	if (grow_array((void **)&k->text, &k->textcap, k->len, want + 1, 1) < 0)
		return -1;
	ssize_t r;
	do
		r = read(k->fd, k->text + k->len, want);
	while (r < 0 && errno == EINTR);
	if (r > 0)
		k->len += (size_t)r;
	return r;
}

static int
is_hex(int c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Reads the rest of the file and replaces what lookups found by its table, keeping which
 * symbols were sent. */
static int
load_rest(struct ksyms *k)
{
	ssize_t r;
	while ((r = read_more(k, READ_CHUNK)) > 0)
		;
	close(k->fd);
	k->fd = -1;
	struct ksymtab found = k->tab, *t = &k->tab;
	k->tab = (struct ksymtab){ 0 };
	k->loaded = 1;
	/* text has its spare byte: read_more always leaves one */
	if (r < 0 || ksymtab_parse(t, k->text, k->len, NULL) < 0) {
		int e = r < 0 ? errno : ENOMEM;
		ksymtab_clear(t);
		k->tab = found;	/* what was found stays, the rest is unnamed */
		k->loaded = 0;
		errno = e;
		return -1;
	}
	for (size_t i = 0, j = 0; i < found.n; i++) {
		while (j < t->n && t->v[j].start < found.v[i].start)
			j++;
		if (j < t->n && t->v[j].start == found.v[i].start)
			t->v[j].sent |= found.v[i].sent;
		free(found.v[i].name);
	}
	ksymtab_clear(&found);
	return 0;
}

static int
open_file(struct ksyms *k, const char *path)
{
	memset(k, 0, sizeof(*k));
	if ((k->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	if (read_more(k, FIRST_READ) < 0 || !k->text) {
		int e = k->text ? errno : ENOMEM;
		close(k->fd);
		k->fd = -1;
		free(k->text);
		k->text = NULL;
		errno = e;
		return -1;
	}
	/* Addresses show as zeros when kptr_restrict hides them: then nothing gets a name. */
	char *p = k->text, *end = k->text + k->len;
	while (p < end && *p == '0')
		p++;
	k->hidden = p > k->text && p < end && !is_hex(*p);
	return 0;
}

int
ksyms_load(struct ksyms *k, const char *path)
{
	if (open_file(k, path) < 0)
		return -1;
	if (load_rest(k) < 0) {
		int e = errno;
		ksyms_free(k);
		errno = e;
		return -1;
	}
	return 0;
}

int
ksyms_open(struct ksyms *k, const char *path, int verbose)
{
	if (open_file(k, path) < 0)
		return -1;
	k->verbose = verbose;
	if (!k->hidden)
		k->live = ksymbpf_open(verbose, k->why, sizeof(k->why));
	return 0;
}

const char *
ksyms_how(const struct ksyms *k)
{
	if (k->hidden)
		return "none: the file shows no addresses";
	return k->live ? "eBPF lookup, the whole file when it cannot tell" : k->why;
}

/* The kernel's answer for ip, added to the symbols found; NULL when kallsyms must tell: no
 * answer, or one without a module that may be the kernel's own or a BPF image's (module
 * "bpf" in kallsyms) when the bounds of the kernel's code are unknown and its name starts
 * with "bpf_". */
static struct ksym *
live_find(struct ksyms *k, uint64_t ip, size_t at)
{
	static struct ksymbpf_answer a;
	if (ksymbpf_lookup(k->live, ip, &a) != 1)
		return NULL;
	if (!a.module[0] && a.kernel_text == 0)
		snprintf(a.module, sizeof(a.module), "bpf");
	else if (!a.module[0] && a.kernel_text < 0 && strncmp(a.name, "bpf_", 4) == 0)
		return NULL;
	struct ksymtab *t = &k->tab;
	/* The neighbours' ranges come from the same table: at most they touch. */
	if ((at > 0 && t->v[at - 1].end > a.start) || (at < t->n && t->v[at].start < a.end))
		return NULL;
	size_t nl = strlen(a.name), ml = strlen(a.module);
	char *s = malloc(nl + ml + 2);
	if (!s || ksymtab_reserve(t, 1) < 0) {
		free(s);
		return NULL;
	}
	memcpy(s, a.name, nl + 1);
	memcpy(s + nl + 1, a.module, ml + 1);
	memmove(&t->v[at + 1], &t->v[at], (t->n - at) * sizeof(*t->v));
	t->v[at] = (struct ksym){ .start = a.start, .end = a.end, .name = s,
				  .module = s + nl + 1 };
	t->n++;
	return &t->v[at];
}

struct ksym *
ksyms_find(struct ksyms *k, uint64_t ip)
{
	size_t at;
	struct ksym *s = ksymtab_find(&k->tab, ip, &at);
	if (s || !k->text || k->loaded || k->hidden || k->fd < 0)
		return s;
	if (k->live && (s = live_find(k, ip, at)))
		return s;
	/* Once, the whole file: from then on the table answers everything. */
	if (k->verbose)
		warnx("kernel symbols: %#llx takes the whole file", (unsigned long long)ip);
	ksymbpf_close(k->live);
	k->live = NULL;
	load_rest(k);
	return ksymtab_find(&k->tab, ip, NULL);
}

void
ksyms_free(struct ksyms *k)
{
	if (!k)
		return;
	if (!k->loaded)
		for (size_t i = 0; i < k->tab.n; i++)
			free(k->tab.v[i].name);
	ksymtab_clear(&k->tab);
	if (k->text && k->fd >= 0)
		close(k->fd);
	free(k->text);
	ksymbpf_close(k->live);
	memset(k, 0, sizeof(*k));
	k->fd = -1;
}
