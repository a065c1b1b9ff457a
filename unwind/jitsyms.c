/* JIT names by process, from the module cache's copies (see jitsyms.h). */
#include "jitsyms.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "grow.h"

#define CHUNK (1u << 20)          /* bytes read at a time */
#define MAX_LINE (64u << 10)      /* a perf map "line" longer than this is skipped */

int
jitsyms_init(struct jitsyms *j, const char *module_cache, uint64_t session_id)
{
	memset(j, 0, sizeof(*j));
	if (module_cache && asprintf(&j->dir, "%s/.jit/%016llx", module_cache,
				     (unsigned long long)session_id) < 0) {
		j->dir = NULL;
		return -1;
	}
	return 0;
}

void
jitsyms_release(struct jitsyms *j)
{
	for (size_t i = 0; i < j->n; i++)
		jittab_release(&j->v[i].tab);
	free(j->v);
	free(j->dir);
	memset(j, 0, sizeof(*j));
}

static uint64_t
now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static struct jitproc *
find(struct jitsyms *j, uint32_t pid, int create)
{
	for (size_t i = 0; i < j->n; i++)
		if (j->v[i].pid == pid)
			return &j->v[i];
	if (!create || grow_array((void **)&j->v, &j->cap, j->n, 1, sizeof(*j->v)) < 0)
		return NULL;
	struct jitproc *p = &j->v[j->n++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	jittab_init(&p->tab);
	return p;
}

/* Parses buf[0, len) of file f; the bytes consumed, -1 when out of memory. */
static long
parse(struct jitproc *p, struct jitfile *f, const uint8_t *buf, size_t len)
{
	if (f == &p->dump)
		return jit_dump_parse(&p->tab, &f->ds, buf, len);
	long used = jit_perfmap_parse(&p->tab, (const char *)buf, len);
	if (used == 0 && len >= MAX_LINE) {
		p->tab.malformed++; /* no newline in all that: not a perf map line */
		return (long)len;
	}
	return used;
}

/* Reads fd on from f->off to size.  0, or -1 when out of memory. */
static int
read_on(struct jitproc *p, struct jitfile *f, int fd, uint64_t size)
{
	size_t chunk = CHUNK;
	uint8_t *buf = NULL;
	int rc = 0;
	while (f->off < size && !f->ds.bad) {
		size_t want = size - f->off < chunk ? (size_t)(size - f->off) : chunk;
		void *v = realloc(buf, want);
		if (!v) {
			rc = -1;
			break;
		}
		buf = v;
		ssize_t got = pread(fd, buf, want, (off_t)f->off);
		if (got <= 0)
			break;
		long used = parse(p, f, buf, (size_t)got);
		if (used < 0) {
			rc = -1;
			break;
		}
		if (used == 0) {
			/* A record longer than the chunk: read more of it at once. */
			if ((size_t)got < want || chunk >= 2 * (size_t)JIT_MAX_RECORD)
				break;
			chunk *= 4;
			continue;
		}
		f->off += (uint64_t)used;
	}
	free(buf);
	return rc;
}

/* Looks at one copy; 1 when it was read on, 0 when unchanged or absent, -1 out of memory. */
static int
refresh(struct jitsyms *j, struct jitproc *p, struct jitfile *f, const char *name)
{
	char path[PATH_MAX];
	struct stat st;
	snprintf(path, sizeof(path), "%s/%u/%s", j->dir, p->pid, name);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return 0;
	int rc = 0;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		int64_t mt = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
		if (!f->found) {
			f->found = 1;
			j->st.files++;
			j->changed = 1;
		}
		if ((uint64_t)st.st_size > f->off && (st.st_size != f->size || mt != f->mtime_ns)) {
			f->size = st.st_size;
			f->mtime_ns = mt;
			rc = read_on(p, f, fd, (uint64_t)st.st_size) < 0 ? -1 : 1;
		}
	}
	close(fd);
	return rc;
}

/* Reads the process's files on when it is time; 1 when symbols were added. */
static int
check(struct jitsyms *j, struct jitproc *p)
{
	uint64_t now = now_ns();
	if (now < p->next_check)
		return 0;
	p->next_check = now + JIT_RECHECK_NS;
	size_t before = p->tab.n;
	uint64_t d = p->tab.dropped, t = p->tab.truncated, m = p->tab.malformed;
	int a = refresh(j, p, &p->map, "perf.map");
	int b = refresh(j, p, &p->dump, "jit.dump");
	if (a < 0 || b < 0)
		return 0; /* out of memory: what was read stays */
	if (a || b) {
		j->st.rereads++;
		j->changed = 1;
	}
	j->st.symbols += p->tab.n - before;
	j->st.dropped += p->tab.dropped - d;
	j->st.truncated += p->tab.truncated - t;
	j->st.malformed += p->tab.malformed - m;
	return p->tab.n > before;
}

const char *
jitsyms_lookup(struct jitsyms *j, uint32_t pid, uint64_t addr, int *grew)
{
	*grew = 0;
	if (!j->dir)
		return NULL;
	struct jitproc *p = find(j, pid, 1);
	if (!p)
		return NULL;
	const struct jitsym *s = jittab_find(&p->tab, addr);
	if (s)
		return s->name;
	if (check(j, p)) {
		*grew = 1;
		s = jittab_find(&p->tab, addr);
	}
	if (!s)
		p->missed = 1;
	return s ? s->name : NULL;
}

void
jitsyms_poll(struct jitsyms *j, void (*grew)(void *arg, uint32_t pid), void *arg)
{
	for (size_t i = 0; i < j->n; i++)
		if (j->v[i].missed && check(j, &j->v[i]))
			grew(arg, j->v[i].pid);
}

void
jitsyms_drop(struct jitsyms *j, uint32_t pid)
{
	struct jitproc *p = find(j, pid, 0);
	if (!p)
		return;
	jittab_release(&p->tab);
	*p = j->v[--j->n];
}

int
jitsyms_take_changed(struct jitsyms *j)
{
	int c = j->changed;
	j->changed = 0;
	return c;
}
