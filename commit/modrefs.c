/* commit: the module cache's refs files and pruning (see modrefs.h). */
#include "modrefs.h"

#include <dirent.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commit.h"
#include "fsutil.h"

#define HEX 41 /* a build id in hex, NUL-terminated */

/* The module lists of windows not yet published. */
struct modrefs_pending {
	uint32_t index;
	char (*ids)[HEX];
	size_t n, cap;
};

/* A set of build ids in hex, sorted once filled. */
struct idset {
	char (*v)[HEX];
	size_t n, cap;
};

static void
set_add(struct idset *s, const char *hex, size_t len)
{
	if (len == 0 || len >= HEX)
		return;
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 256;
		s->v = commit_xrealloc(s->v, s->cap, sizeof(*s->v));
	}
	memcpy(s->v[s->n], hex, len);
	s->v[s->n++][len] = 0;
}

static int
cmp_hex(const void *a, const void *b)
{
	return strcmp(a, b);
}

static int
set_has(const struct idset *s, const char *hex)
{
	return s->n && bsearch(hex, s->v, s->n, sizeof(*s->v), cmp_hex) != NULL;
}

static void
hex_of(const struct fr_bid *b, char out[HEX])
{
	static const char digits[] = "0123456789abcdef";
	for (uint8_t i = 0; i < b->len; i++) {
		out[2 * i] = digits[b->id[i] >> 4];
		out[2 * i + 1] = digits[b->id[i] & 15];
	}
	out[2 * b->len] = 0;
}

void
modrefs_add(struct commit *c, const struct fr_modules *m)
{
	struct modrefs_pending *p = NULL;
	for (size_t i = 0; i < c->nrefs && !p; i++)
		if (c->refs[i].index == m->index)
			p = &c->refs[i];
	if (!p) {
		if (c->nrefs == c->caprefs) {
			c->caprefs = c->caprefs ? c->caprefs * 2 : 8;
			c->refs = commit_xrealloc(c->refs, c->caprefs, sizeof(*c->refs));
		}
		p = &c->refs[c->nrefs++];
		*p = (struct modrefs_pending){ .index = m->index };
	}
	for (uint16_t i = 0; i < m->n; i++) {
		struct fr_bid b = stream_module(m, i);
		if (b.len < 2)
			continue;
		if (p->n == p->cap) {
			p->cap = p->cap ? p->cap * 2 : 64;
			p->ids = commit_xrealloc(p->ids, p->cap, sizeof(*p->ids));
		}
		hex_of(&b, p->ids[p->n++]);
	}
}

/* OUTPUT/.modules and its subdirectory sub, opened (and with create, made); -1 when not. */
static int
open_sub(const struct commit *c, const char *sub, int create)
{
	if (create && mkdirat(c->dirfd, ".modules", 0755) < 0 && errno != EEXIST)
		return -1;
	int mod = openat(c->dirfd, ".modules", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (mod < 0 || !sub)
		return mod;
	if (create && mkdirat(mod, sub, 0755) < 0 && errno != EEXIST) {
		close(mod);
		return -1;
	}
	int fd = openat(mod, sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	close(mod);
	return fd;
}

static void
pending_drop(struct commit *c, size_t i)
{
	free(c->refs[i].ids);
	memmove(c->refs + i, c->refs + i + 1, (c->nrefs - i - 1) * sizeof(*c->refs));
	c->nrefs--;
}

void
modrefs_publish(struct commit *c, uint32_t index, const char *diag_name)
{
	size_t i;
	for (i = 0; i < c->nrefs && c->refs[i].index != index; i++)
		;
	if (i == c->nrefs)
		return; /* no list: the window stands for every module */
	struct modrefs_pending *p = &c->refs[i];
	char tmp[64];
	int dir = open_sub(c, ".refs", 1), fd = -1, ok = 0;
	if (dir >= 0 && (fd = fs_temp_at(dir, "refs", tmp, sizeof(tmp))) >= 0) {
		ok = 1;
		for (size_t k = 0; ok && k < p->n; k++) {
			char line[HEX + 1];
			size_t n = strlen(p->ids[k]);
			memcpy(line, p->ids[k], n);
			line[n] = '\n';
			ok = fs_write_all(fd, line, n + 1) == 0;
		}
		ok = fsync(fd) == 0 && ok;
		ok = close(fd) == 0 && ok;
		ok = ok && renameat(dir, tmp, dir, diag_name) == 0;
		if (!ok)
			unlinkat(dir, tmp, 0);
	}
	if (!ok)
		warnx("cannot write '%s/.modules/.refs/%s': %s; the module cache is not pruned "
		      "while that window stays", c->dir, diag_name, strerror(errno));
	if (dir >= 0)
		close(dir);
	pending_drop(c, i);
}

void
modrefs_unpublish(struct commit *c, const char *diag_name)
{
	int dir = open_sub(c, ".refs", 0);
	if (dir < 0)
		return;
	if (fs_unlink_at(dir, diag_name) < 0)
		warn("cannot remove '%s/.modules/.refs/%s'", c->dir, diag_name);
	close(dir);
}

/* Adds the build ids listed in the file at fd, one per line. */
static void
read_ids(int fd, struct idset *s)
{
	FILE *f = fdopen(fd, "r");
	char line[128];
	if (!f) {
		close(fd);
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		size_t n = strspn(line, "0123456789abcdef");
		/* A line still being written has no newline yet: it is not taken. */
		if (line[n] == '\n')
			set_add(s, line, n);
	}
	fclose(f);
}

static int
ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* The refs of every window in the directory; -1 when some window has none (or cannot be
 * read): then nothing may go. */
static int
window_refs(struct commit *c, int refs, struct idset *keep)
{
	DIR *d = fdopendir(dup(c->dirfd));
	struct dirent *e;
	int rc = 0;
	if (!d)
		return -1;
	rewinddir(d);
	while (rc == 0 && (e = readdir(d))) {
		if (strncmp(e->d_name, "diagnostics-", 12) != 0 || !ends_with(e->d_name, ".json"))
			continue;
		int fd = refs >= 0 ? openat(refs, e->d_name, O_RDONLY | O_CLOEXEC) : -1;
		if (fd < 0)
			rc = -1;
		else
			read_ids(fd, keep);
	}
	closedir(d);
	/* Refs of windows that are gone (removed by hand, or a window that failed). */
	d = refs >= 0 ? fdopendir(dup(refs)) : NULL;
	while (rc == 0 && d && (e = readdir(d))) {
		struct stat st;
		if (e->d_name[0] != '.' && fstatat(c->dirfd, e->d_name, &st, 0) < 0 &&
		    errno == ENOENT)
			unlinkat(refs, e->d_name, 0);
	}
	if (d)
		closedir(d);
	return rc;
}

/* The lists of the running sessions; those of ended ones are removed when drop_ended. */
static void
session_refs(struct commit *c, int sessions, int ended, int drop_ended, struct idset *keep)
{
	char own[17];
	snprintf(own, sizeof(own), "%016llx", (unsigned long long)c->header.session_id);
	DIR *d = sessions >= 0 ? fdopendir(dup(sessions)) : NULL;
	struct dirent *e;
	if (d)
		rewinddir(d);
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue; /* not yet locked: its collect renames it when it is */
		int fd = openat(sessions, e->d_name, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		/* The stream's own session is over at its end, even if its collect still
		 * holds the lock while it exits. */
		int running = flock(fd, LOCK_SH | LOCK_NB) < 0 &&
			      !(ended && strcmp(e->d_name, own) == 0);
		if (running) {
			read_ids(fd, keep);
			continue;
		}
		close(fd);
		if (drop_ended)
			unlinkat(sessions, e->d_name, 0);
	}
	if (d)
		closedir(d);
}

/* A module set aside by a pass that did not finish (its commit died) goes back under its
 * name, to be judged again by the next pass. */
static void
put_back(int dir, const char *name)
{
	const char *tag = strstr(name, ".prune.");
	char rest[HEX];
	long pid;
	if (!tag || tag - name - 1 <= 0 || tag - name - 1 >= HEX)
		return;
	pid = strtol(tag + 7, NULL, 10);
	if (pid <= 0 || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
		return;
	snprintf(rest, sizeof(rest), "%.*s", (int)(tag - name - 1), name + 1);
	renameat(dir, name, dir, rest);
}

/* Candidate entries xx/rest renamed aside, to be removed or put back. */
struct aside {
	char hex[HEX];
};
struct asides {
	struct aside *v;
	size_t n, cap;
};

/* One directory .build-id/xx (d): each entry no kept window or session names is renamed
 * aside (.rest.prune.PID) and listed in as; an entry left aside by a pruner that died is
 * put back first. */
static void
set_aside_in(DIR *d, const char *xx, const struct idset *keep, const char *tag,
	     struct asides *as)
{
	struct dirent *b;
	while ((b = readdir(d))) {
		char hex[HEX], moved[HEX + 40];
		size_t n = strlen(b->d_name);
		if (b->d_name[0] == '.') {
			put_back(dirfd(d), b->d_name);
			continue;
		}
		if (n + 2 >= HEX || strspn(b->d_name, "0123456789abcdef") != n)
			continue; /* ., .., a copy being written, one set aside */
		snprintf(hex, sizeof(hex), "%s%s", xx, b->d_name);
		if (set_has(keep, hex))
			continue;
		snprintf(moved, sizeof(moved), ".%s%s", b->d_name, tag);
		if (renameat(dirfd(d), b->d_name, dirfd(d), moved) < 0)
			continue;
		if (as->n == as->cap) {
			as->cap = as->cap ? as->cap * 2 : 64;
			as->v = commit_xrealloc(as->v, as->cap, sizeof(*as->v));
		}
		snprintf(as->v[as->n++].hex, HEX, "%s", hex);
	}
}

/* Every .build-id/xx directory of the cache (ids), through set_aside_in. */
static void
set_aside(int ids, const struct idset *keep, const char *tag, struct asides *as)
{
	DIR *top = fdopendir(dup(ids));
	struct dirent *a;
	if (!top)
		return;
	rewinddir(top);
	while ((a = readdir(top))) {
		if (strlen(a->d_name) != 2 || a->d_name[0] == '.')
			continue;
		int sub = openat(ids, a->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		DIR *d = sub >= 0 ? fdopendir(sub) : NULL;
		if (d) {
			set_aside_in(d, a->d_name, keep, tag, as);
			closedir(d);
		} else if (sub >= 0) {
			close(sub);
		}
	}
	closedir(top);
}

/* The entries set aside go, but those a session listed meanwhile (late) go back. */
static void
settle_aside(const struct commit *c, int ids, const struct asides *as, const struct idset *late,
	     const char *tag)
{
	for (size_t i = 0; i < as->n; i++) {
		char sub[3] = { as->v[i].hex[0], as->v[i].hex[1], 0 }, moved[HEX + 40];
		const char *rest = as->v[i].hex + 2;
		int fd = openat(ids, sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			continue;
		snprintf(moved, sizeof(moved), ".%s%s", rest, tag);
		if (set_has(late, as->v[i].hex))
			renameat(fd, moved, fd, rest);
		else if (unlinkat(fd, moved, 0) < 0)
			warn("cannot remove '%s/.modules/.build-id/%s/%s'", c->dir, sub, moved);
		close(fd);
		unlinkat(ids, sub, AT_REMOVEDIR); /* fails while it holds others */
	}
}

void
modrefs_prune(struct commit *c, int ended)
{
	int ids = open_sub(c, ".build-id", 0);
	if (ids < 0)
		return;
	int refs = open_sub(c, ".refs", 0), sessions = open_sub(c, ".sessions", 0);
	struct idset keep = { 0 }, late = { 0 };
	struct asides as = { 0 };
	char tag[32];
	snprintf(tag, sizeof(tag), ".prune.%d", (int)getpid());

	if (window_refs(c, refs, &keep) == 0) {
		session_refs(c, sessions, ended, 1, &keep);
		if (keep.n) /* nothing kept: no array to sort */
			qsort(keep.v, keep.n, sizeof(*keep.v), cmp_hex);
		set_aside(ids, &keep, tag, &as);
		/* A session may have listed one of them meanwhile: it listed it before it
		 * looked. */
		session_refs(c, sessions, ended, 0, &late);
		if (late.n)
			qsort(late.v, late.n, sizeof(*late.v), cmp_hex);
		settle_aside(c, ids, &as, &late, tag);
	}
	int jit = open_sub(c, ".jit", 0);
	if (jit >= 0) {
		jitprune(c, jit, sessions, ended);
		close(jit);
	}
	free(late.v);
	free(as.v);
	free(keep.v);
	if (refs >= 0)
		close(refs);
	if (sessions >= 0)
		close(sessions);
	close(ids);
}

void
modrefs_release(struct commit *c)
{
	for (size_t i = 0; i < c->nrefs; i++)
		free(c->refs[i].ids);
	free(c->refs);
	c->refs = NULL;
	c->nrefs = c->caprefs = 0;
}
