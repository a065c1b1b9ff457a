/* Process ends from thread exits (see procend.h). */
#include "procend.h"

#include <dirent.h>
#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


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

uint32_t
procend_exit(struct procend *p, uint32_t pid, uint32_t tid)
{
	int found;
	size_t i = u32set_find(&p->waiting, pid, &found);
	if (pid != tid && !found)
		return 0;
	if (others_alive(pid, tid)) {
		if (pid == tid && u32set_add(&p->waiting, pid) < 0)
			errx(1, "out of memory");
		return 0;
	}
	if (found)
		u32set_remove_at(&p->waiting, i);
	return EXIT_PROCESS;
}

void
procend_check(struct procend *p, uint64_t now, struct emit *out, struct scope *s)
{
	if (!p->waiting.n || now < p->next_check)
		return;
	p->next_check = now + CHECK_NS;
	for (size_t i = 0; i < p->waiting.n;) {
		uint32_t pid = p->waiting.v[i];
		if (others_alive(pid, pid)) {
			i++;
			continue;
		}
		struct fr_task t = { .time = now, .pid = pid, .tid = pid, .flags = EXIT_PROCESS };
		emit_task(out, FR_EXIT, &t);
		scope_gone(s, t.pid);
		u32set_remove_at(&p->waiting, i);
	}
}

void
procend_free(struct procend *p)
{
	u32set_free(&p->waiting);
}
