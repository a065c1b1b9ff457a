/* Process ends from thread exits (see procend.h). */
#include "procend.h"

#include <dirent.h>
#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect.h"

#define CHECK_NS 1000000000ull

/* 1 when /proc/pid/task lists a thread other than the leader and the one exiting. */
static int
others_alive(uint32_t pid, uint32_t exiting)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%u/task", pid);
	DIR *d = opendir(path);
	if (!d)
		return 0;
	struct dirent *de;
	int alive = 0;
	while (!alive && (de = readdir(d))) {
		char *end;
		unsigned long tid = strtoul(de->d_name, &end, 10);
		alive = !*end && tid && tid != pid && tid != exiting;
	}
	closedir(d);
	return alive;
}

static size_t
find(const struct procend *p, uint32_t pid, int *found)
{
	size_t lo = 0, hi = p->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->pids[mid] < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < p->n && p->pids[lo] == pid;
	return lo;
}

static void
wait_for(struct procend *p, uint32_t pid)
{
	int found;
	size_t i = find(p, pid, &found);
	if (found)
		return;
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 16;
		uint32_t *v = realloc(p->pids, cap * sizeof(*v));
		if (!v)
			errx(1, "out of memory");
		p->pids = v;
		p->cap = cap;
	}
	memmove(p->pids + i + 1, p->pids + i, (p->n - i) * sizeof(*p->pids));
	p->pids[i] = pid;
	p->n++;
}

static void
drop(struct procend *p, size_t i)
{
	memmove(p->pids + i, p->pids + i + 1, (p->n - i - 1) * sizeof(*p->pids));
	p->n--;
}

uint32_t
procend_exit(struct procend *p, uint32_t pid, uint32_t tid)
{
	int found;
	size_t i = find(p, pid, &found);
	if (pid != tid && !found)
		return 0;
	if (others_alive(pid, tid)) {
		if (pid == tid)
			wait_for(p, pid);
		return 0;
	}
	if (found)
		drop(p, i);
	return EXIT_PROCESS;
}

void
procend_check(struct collect *c, uint64_t now)
{
	struct procend *p = &c->procend;
	if (!p->n || now < p->next_check)
		return;
	p->next_check = now + CHECK_NS;
	for (size_t i = 0; i < p->n;) {
		if (others_alive(p->pids[i], p->pids[i])) {
			i++;
			continue;
		}
		struct fr_task t = { .time = now, .pid = p->pids[i], .tid = p->pids[i],
				     .flags = EXIT_PROCESS };
		emit_task(&c->out, FR_EXIT, &t);
		scope_gone(c, t.pid);
		drop(p, i);
	}
}

void
procend_free(struct procend *p)
{
	free(p->pids);
	memset(p, 0, sizeof(*p));
}
