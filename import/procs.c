/*
 * The name and executable of each process of the capture, from COMM and MMAP records, so
 * that the target frame (written at the first sample) names the profiled process: the
 * Firefox profile's title and pprof's main mapping come from it.  The process name is the
 * main thread's (tid = pid); the executable the first file mapped executable after the last
 * exec, which is the program (the kernel maps it before the interpreter, and perf's
 * synthesized maps come in address order).  At most PROCS_MAX processes are kept.
 */
#include <stdlib.h>
#include <string.h>

#include "import.h"

static struct procent *
slot(struct imp *m, uint32_t pid, int create)
{
	if (!m->procs) {
		if (!create)
			return NULL;
		if (!(m->procs = calloc(PROCS_MAX, sizeof(*m->procs))))
			return NULL;
	}
	size_t j = (pid * 2654435761u) & (PROCS_MAX - 1);
	for (size_t k = 0; k < PROCS_MAX; k++, j = (j + 1) & (PROCS_MAX - 1)) {
		struct procent *p = &m->procs[j];
		if (p->used && p->pid == pid)
			return p;
		if (!p->used) {
			/* keep a quarter free: probes stay short */
			if (!create || m->nprocs >= PROCS_MAX / 4 * 3)
				return NULL;
			p->used = 1;
			p->pid = pid;
			m->nprocs++;
			return p;
		}
	}
	return NULL;
}

/* -1 only when out of memory; a full table just stops naming new processes. */
int
procs_comm(struct imp *m, uint32_t pid, uint32_t tid, struct str comm, int exec)
{
	struct procent *p = slot(m, pid, 1);
	if (!p)
		return m->procs ? 0 : -1;
	if (tid == pid || !p->comm[0]) {
		size_t n = comm.len < sizeof(p->comm) - 1 ? comm.len : sizeof(p->comm) - 1;
		memcpy(p->comm, comm.p, n);
		p->comm[n] = 0;
	}
	if (exec) {
		free(p->exe);
		p->exe = NULL;
	}
	return 0;
}

int
procs_exe(struct imp *m, uint32_t pid, struct str path)
{
	struct procent *p = slot(m, pid, 1);
	if (!p)
		return m->procs ? 0 : -1;
	if (p->exe)
		return 0;
	if (!(p->exe = malloc((size_t)path.len + 1)))
		return -1;
	memcpy(p->exe, path.p, path.len);
	p->exe[path.len] = 0;
	return 0;
}

const struct procent *
procs_find(const struct imp *m, uint32_t pid)
{
	return slot((struct imp *)m, pid, 0);
}

void
procs_release(struct imp *m)
{
	if (m->procs)
		for (size_t i = 0; i < PROCS_MAX; i++)
			free(m->procs[i].exe);
	free(m->procs);
	m->procs = NULL;
	m->nprocs = 0;
}
