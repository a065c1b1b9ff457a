/*
 * perf_event_open plumbing and the ring-buffer reader.
 *
 * inherit=1 forbids mmap on per-task events with cpu == -1, so every event is bound to a
 * thread and a CPU; the first event of each CPU owns a ring and the later ones are
 * redirected into it.  Should the kernel refuse the redirect, each event gets its own
 * smaller ring instead, which costs memory but loses nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cpulist.h"
#include "perf.h"

#define RING_PAGES 128          /* 512 KiB per CPU: seconds of 999 Hz deep stacks */
#define DWARF_RING_PAGES 1024   /* 4 MiB per CPU: 16 KiB stack copies fill a ring 30x faster */
#define SOLO_RING_PAGES 8       /* per event when rings cannot be shared */
/* The calibration's rings (PERF_BOTH) are read every 50 ms and it ends after 64 samples
 * (calib.h): 2 MiB per CPU hold 120 ms of 999 Hz stack copies, and half the pages of a
 * DWARF ring are half the kernel's work to allocate and clear at every start. */
#define CALIB_RING_PAGES 512
#define SCRATCH_SIZE 65536      /* a record's size is a u16 */

static int
perf_open(struct perf_event_attr *a, pid_t tid, int cpu, unsigned long flags)
{
	return (int)syscall(SYS_perf_event_open, a, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC | flags);
}

static void
perf_attr(struct perf_event_attr *a, unsigned freq, int layout, unsigned pages)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	if (freq) {
		a->config = PERF_COUNT_SW_CPU_CLOCK;
		a->freq = 1;
		a->sample_freq = freq;
	} else {
		/* Mappings, names and threads only (--profiles off-cpu alone).  A cpu-clock
		 * event would arm and cancel its timer at every context switch of the target,
		 * which in a virtual machine costs microseconds a switch; a dummy event never
		 * fires and is cheap to switch. */
		a->config = PERF_COUNT_SW_DUMMY;
		a->sample_period = 1;
	}
	a->sample_type = COLLECT_SAMPLE_TYPE;
	a->sample_max_stack = COLLECT_MAX_STACK;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->inherit = 1;
	a->mmap = 1;
	a->mmap2 = 1;
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	a->sample_id_all = 1;
	a->exclude_hv = 1;
	a->build_id = 1;
	/* Wake the reader at half a ring; the loop also drains on a short timeout. */
	a->watermark = 1;
	a->wakeup_watermark = pages * 4096 / 2;
	if (layout != PERF_FP) {
		a->sample_type = COLLECT_DWARF_SAMPLE_TYPE;
		a->sample_regs_user = COLLECT_REGS_MASK;
		a->sample_stack_user = COLLECT_STACK_USER;
		/* DWARF: the kernel walks only its own frames; user frames come from the stack
		 * copy.  Both: the user callchain too, for a verdict still to come. */
		a->exclude_callchain_user = layout == PERF_DWARF;
	}
}

/* The online CPUs, every one of them a slot. */
static int
online_cpus(struct perf_set *p)
{
	struct cpulist l;
	char why[300];
	if (cpulist_read(CPULIST_ONLINE, &l, why, sizeof(why)) < 0) {
		memset(&l, 0, sizeof(l));
		cpulist_add(&l, 0);
	}
	p->cpus = calloc((size_t)l.n, sizeof(int));
	if (!p->cpus)
		return -1;
	for (int c = 0; c < CPULIST_MAX; c++)
		if (cpulist_has(&l, c))
			p->cpus[p->ncpu++] = c;
	return 0;
}

int
perf_set_init(struct perf_set *p, unsigned freq, int layout, char *err, size_t errlen)
{
	memset(p, 0, sizeof(*p));
	p->layout = layout;
	p->dwarf = layout != PERF_FP;
	p->ring_pages = layout == PERF_BOTH ? CALIB_RING_PAGES :
			p->dwarf ? DWARF_RING_PAGES : RING_PAGES;
	perf_attr(&p->attr, freq, layout, p->ring_pages);
	p->shared = 1;
	p->scratch = malloc(SCRATCH_SIZE);
	if (!p->scratch || online_cpus(p) < 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	p->leader = malloc((size_t)p->ncpu * sizeof(int));
	if (!p->leader) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (int i = 0; i < p->ncpu; i++)
		p->leader[i] = -1;
	return 0;
}

/* Opens one event; drops build_id once if this kernel (before 5.12) does not know it. */
static int
perf_open_event(struct perf_set *p, pid_t tid, int cpu, unsigned long flags)
{
	int fd = perf_open(&p->attr, tid, cpu, flags);
	if (fd < 0 && (errno == EINVAL || errno == E2BIG) && p->attr.build_id) {
		p->attr.build_id = 0;
		p->attr.size = sizeof(p->attr);
		fd = perf_open(&p->attr, tid, cpu, flags);
		if (fd < 0)
			p->attr.build_id = 1;
	}
	return fd;
}

static int
ring_map(struct perf_set *p, int fd, int cpu, size_t pages)
{
	if (p->nrings == p->caprings) {
		size_t cap = p->caprings ? p->caprings * 2 : 16;
		void *v = realloc(p->rings, cap * sizeof(*p->rings));
		if (!v)
			return -1;
		p->rings = v;
		p->caprings = cap;
	}
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	size_t len = (1 + pages) * pg;
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return -1;
	struct perf_ring *r = &p->rings[p->nrings];
	r->fd = fd;
	r->cpu = cpu;
	r->pg = m;
	r->map_len = len;
	uint64_t off = r->pg->data_offset ? r->pg->data_offset : pg;
	r->size = r->pg->data_size ? r->pg->data_size : pages * pg;
	r->data = (uint8_t *)m + off;
	return (int)p->nrings++;
}

static int
fds_push(struct perf_set *p, int fd)
{
	if (p->nfds == p->capfds) {
		size_t cap = p->capfds ? p->capfds * 2 : 64;
		int *v = realloc(p->fds, cap * sizeof(*v));
		if (!v)
			return -1;
		p->fds = v;
		p->capfds = cap;
	}
	p->fds[p->nfds++] = fd;
	return 0;
}

/* Puts the new event fd of CPU slot i into a ring: the CPU's, or its own. */
static int
perf_attach(struct perf_set *p, int i, int fd)
{
	if (p->leader[i] < 0) {
		p->leader[i] = ring_map(p, fd, p->cpus[i], p->ring_pages);
		return p->leader[i] < 0 ? -1 : 0;
	}
	if (p->shared &&
	    ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, p->rings[p->leader[i]].fd) == 0)
		return 0;
	p->shared = 0;
	return ring_map(p, fd, p->cpus[i], SOLO_RING_PAGES) < 0 ? -1 : 0;
}

int
perf_set_add(struct perf_set *p, pid_t tid, char *err, size_t errlen)
{
	for (int i = 0; i < p->ncpu; i++) {
		int fd = perf_open_event(p, tid, p->cpus[i], 0);
		if (fd < 0 && errno == ESRCH)
			return 0;
		if (fd < 0) {
			snprintf(err, errlen, "perf_event_open for thread %d on cpu %d: %s",
				 (int)tid, p->cpus[i], strerror(errno));
			return -1;
		}
		if (fds_push(p, fd) < 0 || perf_attach(p, i, fd) < 0) {
			snprintf(err, errlen, "cannot map the ring buffer of cpu %d: %s",
				 p->cpus[i], strerror(errno));
			return -1;
		}
	}
	return 1;
}

/* Opens one event per CPU on pid (a cgroup fd with PERF_FLAG_PID_CGROUP, or -1 for every
 * task): no task of its own, so nothing to inherit. */
static int
add_per_cpu(struct perf_set *p, int pid, unsigned long flags, const char *what, char *err,
	    size_t errlen)
{
	p->attr.inherit = 0;
	for (int i = 0; i < p->ncpu; i++) {
		int fd = perf_open_event(p, pid, p->cpus[i], flags);
		if (fd < 0) {
			snprintf(err, errlen, "perf_event_open for %s on cpu %d: %s", what,
				 p->cpus[i], strerror(errno));
			return -1;
		}
		if (fds_push(p, fd) < 0 || perf_attach(p, i, fd) < 0) {
			snprintf(err, errlen, "cannot map the ring buffer of cpu %d: %s",
				 p->cpus[i], strerror(errno));
			return -1;
		}
	}
	return 0;
}

int
perf_set_add_cgroup(struct perf_set *p, int cgroup_fd, char *err, size_t errlen)
{
	/* Every task of the cgroup is sampled by the CPU it runs on. */
	return add_per_cpu(p, cgroup_fd, PERF_FLAG_PID_CGROUP, "the launch cgroup", err, errlen);
}

int
perf_set_add_cpus(struct perf_set *p, char *err, size_t errlen)
{
	return add_per_cpu(p, -1, 0, p->attr.freq ? "every task" : "the mappings", err, errlen);
}

void
perf_set_source(struct perf_set *p, int cycles, const struct cpulist *only, int exclude_idle)
{
	if (cycles && p->attr.freq) {
		p->attr.type = PERF_TYPE_HARDWARE;
		p->attr.config = PERF_COUNT_HW_CPU_CYCLES;
	}
	p->attr.exclude_idle = exclude_idle ? 1 : 0;
	if (!only)
		return;
	int n = 0;
	for (int i = 0; i < p->ncpu; i++)
		if (cpulist_has(only, p->cpus[i]))
			p->cpus[n++] = p->cpus[i];
	p->ncpu = n;
}

int
perf_cycles_probe(unsigned freq, char *why, size_t whylen)
{
	struct perf_event_attr a;
	perf_attr(&a, freq, PERF_FP, RING_PAGES);
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_CPU_CYCLES;
	a.inherit = 0;
	a.build_id = 0;
	a.disabled = 1;
	/* Ourselves on any CPU: where a PMU exists this opens for every task. */
	int fd = perf_open(&a, 0, -1, 0);
	if (fd < 0) {
		snprintf(why, whylen, "the hardware cycles event cannot be opened (%s)",
			 errno == ENOENT || errno == EOPNOTSUPP || errno == ENODEV ?
				 "no hardware PMU" : strerror(errno));
		return -1;
	}
	close(fd);
	return 0;
}

int
perf_probe(pid_t tid, char *err, size_t errlen)
{
	struct perf_event_attr a;
	perf_attr(&a, 1, PERF_FP, RING_PAGES);
	a.inherit = 0;
	a.build_id = 0;
	a.disabled = 1;
	int fd = perf_open(&a, tid, -1, 0);
	if (fd < 0) {
		snprintf(err, errlen, "perf_event_open failed: %s", strerror(errno));
		return -1;
	}
	close(fd);
	return 0;
}

/* Copies len bytes at ring offset off, wrapping at the end of the data area. */
static void
ring_copy(const struct perf_ring *r, uint64_t off, void *dst, size_t len)
{
	size_t first = (size_t)(r->size - off) < len ? (size_t)(r->size - off) : len;
	memcpy(dst, r->data + off, first);
	memcpy((uint8_t *)dst + first, r->data, len - first);
}

void
perf_ring_read(struct perf_set *p, struct perf_ring *r, perf_record_fn fn, void *arg,
	       int consume)
{
	uint64_t head = __atomic_load_n(&r->pg->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->pg->data_tail, mask = r->size - 1;
	while (tail < head) {
		uint64_t off = tail & mask;
		struct perf_event_header h;
		ring_copy(r, off, &h, sizeof(h));
		if (h.size < sizeof(h) || h.size > head - tail || h.size % 8) {
			/* Nothing after a bad size can be trusted: skip to the head. */
			p->malformed++;
			tail = head;
			break;
		}
		const void *rec = r->data + off;
		if (off + h.size > r->size) {
			ring_copy(r, off, p->scratch, h.size);
			rec = p->scratch;
		}
		fn(arg, rec);
		tail += h.size;
	}
	if (consume)
		__atomic_store_n(&r->pg->data_tail, tail, __ATOMIC_RELEASE);
}

void
perf_set_close(struct perf_set *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nrings; i++)
		munmap(p->rings[i].pg, p->rings[i].map_len);
	for (size_t i = 0; i < p->nfds; i++)
		close(p->fds[i]);
	free(p->rings);
	free(p->fds);
	free(p->cpus);
	free(p->leader);
	free(p->scratch);
	memset(p, 0, sizeof(*p));
}
