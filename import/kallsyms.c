/*
 * Names for the kernel frames of a capture.  A perf.data has the kernel's build id but no
 * symbols; the running kernel's /proc/kallsyms names them when the build ids match (the
 * capture was made on this kernel), and --kallsyms FILE (a copy of the recording machine's
 * /proc/kallsyms) otherwise.  A table from another boot of the same kernel sits at another
 * KASLR offset: perf's [kernel.kallsyms]_text map gives the relocation symbol's address at
 * recording time, and the table is shifted by the difference.
 *
 * The table is read at the first kernel frame, from fds main opened before confinement;
 * each symbol goes out as an FR_KSYM frame before the first sample that needs it.  Only
 * text symbols (t, T, w, W) are kept; a symbol ends where the next begins.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "grow.h"
#include "import.h"

#define KALLSYMS_MAX (256u << 20)   /* bytes of a kallsyms text read at most */

void
kallsyms_init(struct kallsyms *k)
{
	memset(k, 0, sizeof(*k));
	k->fd = k->proc_fd = k->notes_fd = -1;
}

/* The whole of fd, NUL-terminated; NULL when it cannot be read. */
static char *
slurp(int fd, size_t *len)
{
	size_t cap = 1 << 20, n = 0;
	char *b = malloc(cap);
	for (ssize_t r; b;) {
		if (n + 1 == cap) {
			char *nb = cap < KALLSYMS_MAX ? realloc(b, 2 * cap) : NULL;
			if (!nb)
				break;
			b = nb;
			cap *= 2;
		}
		r = read(fd, b + n, cap - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(b);
			return NULL;
		}
		if (r == 0) {
			b[n] = 0;
			*len = n;
			return b;
		}
		n += (size_t)r;
	}
	free(b);
	return NULL;
}

/* The GNU build id in the ELF notes of /sys/kernel/notes; its length, 0 when none. */
static size_t
running_build_id(int fd, uint8_t *id)
{
	uint8_t buf[4096];
	ssize_t n = fd >= 0 ? pread(fd, buf, sizeof(buf), 0) : -1;
	for (size_t o = 0; n > 0 && o + 12 <= (size_t)n;) {
		uint32_t nsz, dsz, type;
		memcpy(&nsz, buf + o, 4);
		memcpy(&dsz, buf + o + 4, 4);
		memcpy(&type, buf + o + 8, 4);
		size_t name = o + 12, desc = name + ((nsz + 3u) & ~3u);
		if (nsz > sizeof(buf) || dsz > sizeof(buf) || desc + dsz > (size_t)n)
			break;
		if (type == 3 && nsz == 4 && !memcmp(buf + name, "GNU", 4) && dsz &&
		    dsz <= STREAM_BUILD_ID_MAX) {
			memcpy(id, buf + desc, dsz);
			return dsz;
		}
		o = desc + ((dsz + 3u) & ~3u);
	}
	return 0;
}

/* capture address - table address of the relocation symbol, 0 without one. */
static int64_t
relocation(const struct imp *m, const struct kallsyms *k)
{
	if (!m->kref_name[0])
		return 0;
	for (size_t i = 0; i < k->tab.n; i++)
		if (!strcmp(k->tab.v[i].name, m->kref_name))
			return (int64_t)(m->kref_addr - k->tab.v[i].start);
	return 0;
}

static void
hex(const uint8_t *id, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", id[i]);
	out[2 * n] = 0;
}

/* A capture without the kernel's build id (pipe mode: perf writes none there) is taken
 * for the running kernel's when it names the same release. */
static int
same_release(const struct imp *m)
{
	struct utsname u;
	return m->osrelease[0] && uname(&u) == 0 && !strcmp(u.release, m->osrelease);
}

/* Which table names the capture's kernel: the running one when the build ids match, else
 * --kallsyms FILE.  fd, or -1 with the reason in k->why. */
static int
source(struct imp *m, struct kallsyms *k, const char **name)
{
	const struct buildid *cb = features_find_buildid(m, "[kernel.kallsyms]", 17);
	uint8_t run[STREAM_BUILD_ID_MAX];
	size_t rlen = running_build_id(k->notes_fd, run);
	char ch[2 * STREAM_BUILD_ID_MAX + 1] = "none", rh[2 * STREAM_BUILD_ID_MAX + 1] = "none";
	if (cb)
		hex(cb->id, cb->len, ch);
	if (rlen)
		hex(run, rlen, rh);
	*name = "/proc/kallsyms";
	if (cb && rlen == cb->len && !memcmp(run, cb->id, rlen) && k->proc_fd >= 0) {
		snprintf(k->why, sizeof(k->why), "(the capture's kernel build id %.16s is the "
			 "running kernel's)", ch);
		return k->proc_fd;
	}
	if (!cb && k->fd < 0 && k->proc_fd >= 0 && same_release(m)) {
		snprintf(k->why, sizeof(k->why), "(the capture has no kernel build id; its "
			 "release %.40s is the running kernel's)", m->osrelease);
		return k->proc_fd;
	}
	if (k->fd >= 0) {
		*name = k->file;
		snprintf(k->why, sizeof(k->why), "(--kallsyms; the capture's kernel build id is "
			 "%.16s, the running kernel's %.16s)", ch, rh);
		return k->fd;
	}
	snprintf(k->why, sizeof(k->why), "kernel frames stay addresses: the capture's kernel "
		 "build id (%.16s) is not the running kernel's (%.16s); --kallsyms FILE names "
		 "them", ch, rh);
	return -1;
}

/* The table read and parsed (on the reader thread, or in load): k->parsed 0 or -1. */
static void
read_table(struct kallsyms *k)
{
	size_t len;
	char *text = slurp(k->read_fd, &len);
	/* slurp leaves the byte after the text, which the parser may cut at */
	k->strings = text;
	k->parsed = text && ksymtab_parse(&k->tab, text, len, &k->zeros) == 0 ? 0 : -1;
}

static void *
reader(void *arg)
{
	read_table(arg);
	return NULL;
}

/* What the table gave: the state, the relocation and the message. */
static void
judge(struct imp *m, struct kallsyms *k)
{
	const char *name = k->name;
	k->state = -1;
	if (k->parsed < 0) {
		snprintf(k->why, sizeof(k->why), "kernel frames stay addresses: cannot read %s",
			 name);
		return;
	}
	if (k->tab.n == 0 && k->zeros == 0) {
		snprintf(k->why, sizeof(k->why), "kernel frames stay addresses: %s holds no "
			 "text symbols", name);
		return;
	}
	if (k->tab.n == 0) {
		snprintf(k->why, sizeof(k->why), "kernel frames stay addresses: %s shows no "
			 "addresses (kptr_restrict; a copy made as root names them)", name);
		return;
	}
	k->delta = relocation(m, k);
	char why[sizeof(k->why)];
	int n = snprintf(why, sizeof(why), "kernel frames named from %s ", name);
	if (n > 0 && (size_t)n < sizeof(why))
		memcpy(why + n, k->why, strnlen(k->why, sizeof(why) - (size_t)n - 1) + 1);
	why[sizeof(why) - 1] = 0;
	memcpy(k->why, why, sizeof(why));
	k->state = 1;
}

/* Which table names the capture's kernel: 1 with k->read_fd and k->name set, else 0 with
 * the state -1 (and k->why saying why, from source). */
static int
choose(struct imp *m, struct kallsyms *k)
{
	k->state = -1;
	if (m->nksyms)
		return 0; /* the capture carries its own (simpleperf) */
	if ((k->read_fd = source(m, k, &k->name)) < 0)
		return 0;
	k->state = 0;
	return 1;
}

static void
load(struct imp *m, struct kallsyms *k)
{
	if (!choose(m, k))
		return;
	read_table(k);
	judge(m, k);
}

void
kallsyms_begin(struct imp *m)
{
	struct kallsyms *k = &m->ks;
	if (k->state != 0 || k->reading || !choose(m, k))
		return;
	/* Without a thread the table is read at the first kernel frame, as in a pipe. */
	k->reading = pthread_create(&k->reader, NULL, reader, k) == 0;
}

/* The symbol of address a (the capture's), once: an FR_KSYM frame before its first use. */
static int
name_address(struct imp *m, struct kallsyms *k, uint64_t a)
{
	a -= (uint64_t)k->delta;
	/* samples repeat the same few addresses: one looked up is done with */
	uint64_t *c = &k->seen[(a ^ a >> 17) & (KALLSYMS_SEEN - 1)];
	if (*c == a + 1)
		return 0;
	*c = a + 1;
	struct ksym *e = ksymtab_find(&k->tab, a, NULL);
	if (!e || e->sent)
		return 0;
	e->sent = 1;
	struct fr_ksym f = {
		.start = e->start + (uint64_t)k->delta, .end = e->end + (uint64_t)k->delta,
		.name = { e->name, strnlen(e->name, STREAM_MAX_STR - 1) },
		.module = { e->module, strnlen(e->module, STREAM_MAX_STR - 1) },
	};
	return out_check(m, stream_put_ksym(&m->out, &f));
}

/* Written ahead of the held output: the symbols its samples need. */
static int
name_pending(struct stream_writer *w, void *ctx)
{
	struct imp *m = ctx;
	struct kallsyms *k = &m->ks;
	(void)w;
	memset(k->seen, 0, sizeof(k->seen));
	for (size_t i = 0; i < k->npend && k->state > 0; i++)
		if (name_address(m, k, k->pend[i]) < 0)
			return -1;
	return 0;
}

int
kallsyms_finish(struct imp *m)
{
	struct kallsyms *k = &m->ks;
	if (!k->reading)
		return 0;
	pthread_join(k->reader, NULL);
	k->reading = 0;
	judge(m, k);
	int rc = m->out.hold ? stream_unhold(&m->out, name_pending, m) : 0;
	free(k->pend);
	k->pend = NULL;
	k->npend = k->cpend = 0;
	return rc < 0 ? out_check(m, -1) : 0;
}

/* While the reader runs: the sample's addresses wait, and so does the output, up to a
 * bound past which the import waits for the table instead. */
#define HOLD_BYTES (32u << 20)
static int
hold(struct imp *m, struct kallsyms *k, const uint64_t *ips, size_t n)
{
	/* What is out so far goes first: the symbols then sit just before the first sample. */
	if (out_check(m, stream_hold(&m->out)) < 0)
		return -1;
	if (grow_array((void **)&k->pend, &k->cpend, k->npend, n, sizeof(*k->pend)) < 0)
		return kallsyms_finish(m);
	for (size_t i = 0; i < n; i++) {
		/* above the leaf, a return address: the call is the byte before */
		uint64_t a = i ? ips[i] - 1 : ips[i];
		/* seen keeps the capture's addresses until the table is in (name_pending) */
		uint64_t *c = &k->seen[(a ^ a >> 17) & (KALLSYMS_SEEN - 1)];
		if (*c != a + 1)
			k->pend[k->npend++] = a;
		*c = a + 1;
	}
	return m->out.len > HOLD_BYTES ? kallsyms_finish(m) : 0;
}

int
kallsyms_frames(struct imp *m, const uint64_t *ips, size_t n)
{
	struct kallsyms *k = &m->ks;
	if (n == 0 || k->state < 0)
		return 0;
	if (k->reading)
		return hold(m, k, ips, n);
	if (k->state == 0)
		load(m, k);
	for (size_t i = 0; i < n && k->state > 0; i++)
		/* above the leaf, a return address: the call is the byte before */
		if (name_address(m, k, i ? ips[i] - 1 : ips[i]) < 0)
			return -1;
	return 0;
}

void
kallsyms_note(struct imp *m)
{
	if (m->ks.state != 0 && m->ks.why[0])
		imp_note(m, "%s", m->ks.why);
}

void
kallsyms_release(struct kallsyms *k)
{
	if (k->reading)
		pthread_join(k->reader, NULL);
	k->reading = 0;
	free(k->pend);
	k->pend = NULL;
	if (k->fd >= 0)
		close(k->fd);
	if (k->proc_fd >= 0)
		close(k->proc_fd);
	if (k->notes_fd >= 0)
		close(k->notes_fd);
	k->fd = k->proc_fd = k->notes_fd = -1;
	ksymtab_clear(&k->tab);
	free(k->strings);
	k->strings = NULL;
}
