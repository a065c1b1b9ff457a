/* The kernel's "%pS" of one address, asked through bpf/ksym.bpf.c, and its reading. */
#include "ksymbpf.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/types.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpflog.h"
#include "ksym.skel.h"
#include "ksym_shared.h"

struct ksymbpf {
	struct ksym_bpf *skel;
	int prog_fd;
	uint64_t text[4];	/* the kernel's code, two ranges; zero when unknown */
};

static int
hex(const char *s, const char **end, uint64_t *v)
{
	uint64_t x = 0;
	int n = 0;
	if (s[0] != '0' || s[1] != 'x')
		return -1;
	for (s += 2; n < 17; s++, n++) {
		int d = *s >= '0' && *s <= '9' ? *s - '0' : *s >= 'a' && *s <= 'f' ? *s - 'a' + 10 : -1;
		if (d < 0)
			break;
		x = x << 4 | (uint64_t)d;
	}
	if (n == 0 || n > 16)
		return -1;
	*end = s;
	*v = x;
	return 0;
}

int
ksymbpf_parse(const char *text, uint64_t ip, struct ksymbpf_answer *a)
{
	size_t len = strnlen(text, KSYM_TEXT);
	const char *mod = NULL, *modend = text + len;
	if (len == KSYM_TEXT)
		return 0;	/* cut short */
	/* " [module]" closes the text when there is one; names hold no spaces. */
	if (len > 3 && text[len - 1] == ']') {
		const char *open = strstr(text, " [");
		if (!open || open + 2 >= text + len - 1)
			return 0;
		mod = open + 2;
		modend = open;
	}
	const char *slash = NULL, *plus = NULL;
	for (const char *p = text; p < modend; p++) {
		if (*p == '+')
			plus = p;
		else if (*p == '/')
			slash = p;
	}
	uint64_t off, size;
	const char *e;
	if (!plus || plus == text || !slash || slash < plus || hex(plus + 1, &e, &off) < 0 ||
	    e != slash || hex(slash + 1, &e, &size) < 0 || e != modend)
		return 0;
	size_t nl = (size_t)(plus - text), ml = mod ? (size_t)(text + len - 1 - mod) : 0;
	if (size == 0 || off >= size || off > ip || ip - off > UINT64_MAX - size ||
	    nl >= sizeof(a->name) || ml >= sizeof(a->module))
		return 0;
	memcpy(a->name, text, nl);
	a->name[nl] = 0;
	memcpy(a->module, mod ? mod : "", ml);
	a->module[ml] = 0;
	a->kernel_text = -1;
	a->start = ip - off;
	a->end = a->start + size;
	return 1;
}

struct ksymbpf *
ksymbpf_open(int verbose, char *why, size_t whylen)
{
	struct ksymbpf *kb = calloc(1, sizeof(*kb));
	const char *step = "open";
	int rc = -ENOMEM;
	if (!kb)
		goto fail;
	bpflog_reset(verbose);
	if (!(kb->skel = ksym_bpf__open())) {
		rc = -errno;
		goto fail;
	}
	step = "load";
	/* ksym_text's helper is younger than ksym_name's: without it, bounds are unknown. */
	if ((rc = ksym_bpf__load(kb->skel)) != 0) {
		ksym_bpf__destroy(kb->skel);
		if (!(kb->skel = ksym_bpf__open())) {
			rc = -errno;
			goto fail;
		}
		bpf_program__set_autoload(kb->skel->progs.ksym_text, false);
		if ((rc = ksym_bpf__load(kb->skel)) != 0)
			goto fail;
	}
	kb->prog_fd = bpf_program__fd(kb->skel->progs.ksym_name);
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	int text_fd = bpf_program__fd(kb->skel->progs.ksym_text);
	if (text_fd >= 0 && bpf_prog_test_run_opts(text_fd, &opts) == 0 &&
	    kb->skel->bss->text[0] && kb->skel->bss->text[0] < kb->skel->bss->text[1] &&
	    kb->skel->bss->text[2] <= kb->skel->bss->text[3])
		memcpy(kb->text, kb->skel->bss->text, sizeof(kb->text));
	return kb;
fail:
	snprintf(why, whylen, "cannot %s the kernel-symbol program: %s%s%s%s", step,
		 strerror(rc < 0 ? -rc : rc ? rc : EINVAL), bpflog_last()[0] ? " (libbpf: " : "",
		 bpflog_last(), bpflog_last()[0] ? ")" : "");
	ksymbpf_close(kb);
	return NULL;
}

int
ksymbpf_lookup(struct ksymbpf *kb, uint64_t ip, struct ksymbpf_answer *a)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	kb->skel->bss->addr = ip;
	kb->skel->bss->answer[0] = 0;
	if (bpf_prog_test_run_opts(kb->prog_fd, &opts) < 0)
		return -1;
	char text[KSYM_TEXT];
	memcpy(text, kb->skel->bss->answer, sizeof(text));
	text[sizeof(text) - 1] = 0;
	int rc = ksymbpf_parse(text, ip, a);
	if (rc == 1 && !a->module[0])
		a->kernel_text = !kb->text[0] ? -1 :
				 (a->start >= kb->text[0] && a->start < kb->text[1]) ||
				 (a->start >= kb->text[2] && a->start < kb->text[3]);
	return rc;
}

void
ksymbpf_close(struct ksymbpf *kb)
{
	if (!kb)
		return;
	ksym_bpf__destroy(kb->skel);
	free(kb);
}
