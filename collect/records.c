/*
 * perf records into stream frames.  Every record's size is checked against the minimum for
 * its type before a field is read; a record that fails is counted as LOST_MALFORMED.
 * Records of other processes (children that inherited the events) are dropped, because
 * record --pid follows one process, not its descendants; in launch's cgroup scope every
 * process of the cgroup is kept (scope.h).
 */
#include <err.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "calib.h"
#include "collect.h"
#include "procfs.h"

/* sample_id_all trailer for COLLECT_SAMPLE_TYPE: u32 pid, tid; u64 time; u32 cpu, res. */
#define SID_SIZE 24
#define SAMPLE_FIXED 56 /* header, ip, pid/tid, time, cpu/res, period, nr */
#define MMAP2_FIXED 72  /* header through prot/flags; the filename follows */
/* A calibration keeps at most this much (about 64 samples of 17 KiB, with room for the
 * mappings and tasks of a busy cgroup); what comes beyond is counted as lost. */
#define KEPT_MAX_BYTES (64u << 20)

static uint32_t
rd32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t
rd64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t
sid_time(const uint8_t *r, size_t size)
{
	return rd64(r + size - SID_SIZE + 8);
}

/* Sends the symbol of each kernel ip not named yet, so readers meet it before the sample. */
void
send_ksyms(struct ksyms *k, struct emit *out, const uint64_t *ips, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct ksym *s = ksyms_find(k, ips[i]);
		if (!s || s->sent)
			continue;
		s->sent = 1;
		struct fr_ksym f = {
			.start = s->start, .end = s->end,
			.name = { s->name, (uint16_t)strnlen(s->name, STREAM_MAX_STR - 1) },
			.module = { s->module, (uint16_t)strnlen(s->module, STREAM_MAX_STR - 1) },
		};
		emit_ksym(out, &f);
	}
}

/* Splits the callchain at the context markers: kernel ips, then user ips, leaf first.
 * Entries in other contexts (hypervisor, guest) are left out. */
static void
split_chain(struct fr_sample *s, const uint8_t *chain, uint64_t nr, int kernel_first)
{
	uint64_t user[STREAM_MAX_IPS];
	size_t nk = 0, nu = 0;
	int mode = kernel_first ? 1 : 2; /* 1 kernel, 2 user, 0 skip */
	for (uint64_t i = 0; i < nr; i++) {
		uint64_t ip = rd64(chain + 8 * i);
		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			mode = ip == (uint64_t)PERF_CONTEXT_KERNEL ? 1 :
			       ip == (uint64_t)PERF_CONTEXT_USER ? 2 : 0;
			continue;
		}
		if (nk + nu >= STREAM_MAX_IPS)
			break;
		if (mode == 1)
			s->ips[nk++] = ip;
		else if (mode == 2)
			user[nu++] = ip;
	}
	memcpy(s->ips + nk, user, nu * sizeof(*user));
	s->nkernel = (uint16_t)nk;
	s->nuser = (uint16_t)nu;
}

/*
 * DWARF mode: after the callchain the record holds u64 abi, the registers of the mask when
 * abi is not 0, u64 size, size bytes of user stack and, when size is not 0, u64 dyn_size,
 * the part of the copy the kernel actually filled.  0, or -1 for a malformed record.
 */
/* The stack pointer's place among a sample's registers (those of the mask below it). */
#define SP_INDEX __builtin_popcountll(COLLECT_REGS_MASK & ((1ull << COLLECT_SP_BIT) - 1))

static int
send_regs(struct collect *c, const struct fr_sample *s, const uint8_t *p, const uint8_t *end)
{
	struct fr_sample_regs *sr = &c->rec.sregs;
	unsigned nregs = (unsigned)__builtin_popcountll(COLLECT_REGS_MASK);

	if (end - p < 8)
		return -1;
	sr->abi = (uint32_t)rd64(p);
	p += 8;
	sr->nregs = 0;
	sr->reg_mask = 0;
	if (sr->abi) {
		if ((size_t)(end - p) < nregs * 8u || nregs > STREAM_MAX_REGS)
			return -1;
		for (unsigned i = 0; i < nregs; i++)
			sr->regs[i] = rd64(p + 8 * i);
		sr->nregs = (uint16_t)nregs;
		sr->reg_mask = COLLECT_REGS_MASK;
		p += nregs * 8u;
	}
	if (end - p < 8)
		return -1;
	uint64_t size = rd64(p), dyn = 0;
	p += 8;
	if (size > (uint64_t)(end - p) || (size && (uint64_t)(end - p) < size + 8))
		return -1;
	if (size)
		dyn = rd64(p + size);
	sr->stack = p;
	sr->stack_len = (uint32_t)(dyn < size ? dyn : size);
	if (sr->nregs)
		sr->stack_len = stacktop_trim(&c->rec.top, s->pid, sr->regs[SP_INDEX],
					      sr->stack, sr->stack_len);
	sr->time = s->time;
	sr->pid = s->pid;
	sr->tid = s->tid;
	sr->cpu = s->cpu;
	sr->period = s->period;
	sr->nkernel = s->nkernel;
	memcpy(sr->kips, s->ips, s->nkernel * sizeof(s->ips[0]));
	emit_sample_regs(&c->out, sr);
	return 0;
}

static void
on_sample(struct collect *c, const struct perf_event_header *h, const uint8_t *r)
{
	uint64_t nr = h->size >= SAMPLE_FIXED ? rd64(r + 48) : 0;
	if (h->size < SAMPLE_FIXED || nr > (uint64_t)(h->size - SAMPLE_FIXED) / 8) {
		c->rec.malformed++;
		return;
	}
	struct fr_sample *s = &c->rec.sample;
	s->pid = rd32(r + 16);
	if (!scope_covers(&c->scope, s->pid)) {
		c->rec.dropped++;
		return;
	}
	s->tid = rd32(r + 20);
	s->time = rd64(r + 24);
	s->cpu = rd32(r + 32);
	s->period = rd64(r + 40);
	/* Samples taken after the deadline belong to no window of this recording. */
	if (c->run.deadline_ns && s->time >= c->run.deadline_ns)
		return;
	int in_kernel = (h->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
	split_chain(s, r + SAMPLE_FIXED, nr, in_kernel);
	if (c->rec.calib) {
		calib_sample(c->rec.calib, s->pid, s->ips + s->nkernel, s->nuser);
		return;
	}
	synth_if_new(c, s->pid);
	jitcopy_before_sample(&c->jit);
	/* --profiles off-cpu alone: the events only follow mappings and threads. */
	if (c->o.no_cpu)
		return;
	/* A calibration's sample carries the callchain and the stack: the mode chooses. */
	if (c->perf.dwarf && strcmp(c->unwind.mode, "dwarf") == 0) {
		s->nuser = 0;
		send_ksyms(&c->ksyms, &c->out, s->ips, s->nkernel);
		if (send_regs(c, s, r + SAMPLE_FIXED + nr * 8, r + h->size) < 0)
			c->rec.malformed++;
		else
			c->rec.samples++;
		return;
	}
	if (s->nkernel + s->nuser == 0) {
		/* No callchain: the interrupted ip alone is still a usable leaf. */
		s->ips[0] = rd64(r + 8);
		s->nkernel = in_kernel ? 1 : 0;
		s->nuser = in_kernel ? 0 : 1;
	}
	send_ksyms(&c->ksyms, &c->out, s->ips, s->nkernel);
	if (s->pid == (uint32_t)c->o.pid)
		fallback_sample(&c->fb, &c->out, s->time, s->nkernel, s->ips + s->nkernel,
				s->nuser);
	emit_sample(&c->out, s);
	c->rec.samples++;
}

static void
on_mmap2(struct collect *c, const struct perf_event_header *h, const uint8_t *r)
{
	size_t size = h->size, plen;
	if (size < MMAP2_FIXED + 8 + SID_SIZE ||
	    (plen = strnlen((const char *)r + MMAP2_FIXED, size - SID_SIZE - MMAP2_FIXED)) ==
		    size - SID_SIZE - MMAP2_FIXED) {
		c->rec.malformed++;
		return;
	}
	struct fr_mmap m = {
		.time = sid_time(r, size), .pid = rd32(r + 8), .tid = rd32(r + 12),
		.start = rd64(r + 16), .len = rd64(r + 24), .pgoff = rd64(r + 32),
		.prot = rd32(r + 64), .flags = rd32(r + 68),
		.path = { (const char *)r + MMAP2_FIXED,
			  (uint16_t)(plen < STREAM_MAX_STR ? plen : STREAM_MAX_STR - 1) },
	};
	if (!scope_covers(&c->scope, m.pid) || !(m.prot & PROT_EXEC))
		return;
	if (c->rec.calib) {
		calib_map(c->rec.calib, m.pid, m.start, m.start + m.len);
		return;
	}
	if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
		m.build_id_len = r[40] <= STREAM_BUILD_ID_MAX ? r[40] : STREAM_BUILD_ID_MAX;
		memcpy(m.build_id, r + 44, m.build_id_len);
	}
	collect_mapping(c, &m, m.start + m.len);
}

static void
on_comm(struct collect *c, const struct perf_event_header *h, const uint8_t *r)
{
	size_t size = h->size, n;
	if (size < 16 + 8 + SID_SIZE ||
	    (n = strnlen((const char *)r + 16, size - SID_SIZE - 16)) == size - SID_SIZE - 16) {
		c->rec.malformed++;
		return;
	}
	struct fr_comm m = {
		.time = sid_time(r, size), .pid = rd32(r + 8), .tid = rd32(r + 12),
		.flags = (h->misc & PERF_RECORD_MISC_COMM_EXEC) ? COMM_EXEC : 0,
		.comm = { (const char *)r + 16, (uint16_t)n },
	};
	if (!scope_covers(&c->scope, m.pid))
		return;
	if (c->rec.calib) {
		if (m.flags & COMM_EXEC)
			calib_exec(c->rec.calib, m.pid);
		return;
	}
	collect_comm(c, &m);
	if (m.flags & COMM_EXEC)
		stacktop_forget(&c->rec.top, m.pid);
	if (m.pid != (uint32_t)c->o.pid) {
		/* Another process of the cgroup: the new image's mappings follow as records. */
		if (m.flags & COMM_EXEC)
			scope_known(&c->scope, m.pid);
		return;
	}
	/* The loop handles the exec once the rings are drained (one that ended a calibration
	 * too, once its records are written). */
	if ((m.flags & COMM_EXEC) && exec_seen(&c->exec, &c->out, c->o.pid, m.time))
		fallback_exec(&c->fb);
}

/* A new thread or process goes by its creator's name until it sets or executes its own,
 * and no record says so: the name is written at its FORK. */
static void
name_new_task(struct collect *c, const struct fr_task *t)
{
	char comm[64];
	if (names_set_since(&c->names, t->tid, t->time))
		return; /* it named itself, and that record came first */
	const char *known = names_get(&c->names, t->ptid);
	if (known)
		snprintf(comm, sizeof(comm), "%s", known);
	else if (procfs_comm((pid_t)t->pid, (pid_t)t->tid, comm, sizeof(comm)) < 0 &&
		 procfs_comm((pid_t)t->ppid, (pid_t)t->ptid, comm, sizeof(comm)) < 0)
		return;
	struct fr_comm m = { .time = t->time, .pid = t->pid, .tid = t->tid,
			     .comm = str_of(comm) };
	collect_comm(c, &m);
}

static void
on_task(struct collect *c, const struct perf_event_header *h, const uint8_t *r)
{
	if (h->size < 32 + SID_SIZE) {
		c->rec.malformed++;
		return;
	}
	struct fr_task t = {
		.pid = rd32(r + 8), .ppid = rd32(r + 12), .tid = rd32(r + 16),
		.ptid = rd32(r + 20), .time = rd64(r + 24),
	};
	/* While calibrating nothing is written: the child's mappings are not in the stream. */
	if (h->type == PERF_RECORD_FORK && t.pid != t.ppid && !c->rec.calib)
		scope_forked(&c->scope, t.pid, t.ppid);
	if (!scope_covers(&c->scope, t.pid)) {
		/* Its pid may come back as a process of the scope. */
		if (h->type == PERF_RECORD_EXIT && t.pid == t.tid)
			scope_gone(&c->scope, t.pid);
		return;
	}
	if (c->rec.calib) {
		if (h->type == PERF_RECORD_FORK && t.pid != t.ppid)
			calib_fork(c->rec.calib, t.pid, t.ppid);
		return;
	}
	if (h->type == PERF_RECORD_EXIT)
		t.flags = procend_exit(&c->procend, t.pid, t.tid);
	emit_task(&c->out, h->type == PERF_RECORD_FORK ? FR_FORK : FR_EXIT, &t);
	if (h->type == PERF_RECORD_FORK)
		name_new_task(c, &t);
	if (t.flags & EXIT_PROCESS) {
		scope_gone(&c->scope, t.pid);
		stacktop_forget(&c->rec.top, t.pid);
	}
}

/* LOST {id, lost}, LOST_SAMPLES {lost}, THROTTLE {time, id, stream_id}. */
static void
on_lost(struct collect *c, const struct perf_event_header *h, const uint8_t *r)
{
	size_t min = h->type == PERF_RECORD_LOST ? 24 : h->type == PERF_RECORD_THROTTLE ? 32 : 16;
	if (h->size < min + SID_SIZE) {
		c->rec.malformed++;
		return;
	}
	if (c->rec.calib)
		return; /* kept, and written with the rest */
	struct fr_lost l = { .time = sid_time(r, h->size), .count = 1, .kind = LOST_THROTTLED };
	if (h->type == PERF_RECORD_LOST)
		l = (struct fr_lost){ l.time, rd64(r + 16), LOST_RECORDS };
	else if (h->type == PERF_RECORD_LOST_SAMPLES)
		l = (struct fr_lost){ l.time, rd64(r + 8), LOST_RECORDS };
	if (l.count)
		emit_lost(&c->out, &l);
}

/* While calibrating nothing is written: the stream starts once the mode is chosen.  The
 * records are kept whole (sizes are multiples of 8) and go out then, from the start. */
static void
keep(struct kept *k, const struct perf_event_header *h)
{
	if (k->len + h->size > KEPT_MAX_BYTES) {
		k->lost++;
		return;
	}
	if (k->len + h->size > k->cap) {
		size_t cap = k->cap ? k->cap * 2 : 1u << 20;
		while (cap < k->len + h->size)
			cap *= 2;
		uint8_t *p = realloc(k->buf, cap);
		if (!p)
			errx(1, "out of memory");
		k->buf = p;
		k->cap = cap;
	}
	memcpy(k->buf + k->len, h, h->size);
	k->len += h->size;
}

void
records_replay(struct collect *c)
{
	struct kept *k = &c->rec.kept;
	uint64_t last = c->run.start_ns;
	for (size_t off = 0; off < k->len;) {
		const struct perf_event_header *h = (const void *)(k->buf + off);
		if (h->type == PERF_RECORD_SAMPLE && h->size >= SAMPLE_FIXED) {
			last = rd64((const uint8_t *)h + 24);
			/* The calibration's allocations, in time order with its samples. */
			collect_heap_release(c, last);
			collect_physical_release(c, last);
		}
		records_handle(c, h);
		off += h->size;
	}
	if (k->lost) {
		struct fr_lost l = { .time = last, .count = k->lost, .kind = LOST_RECORDS };
		emit_lost(&c->out, &l);
	}
	free(k->buf);
	*k = (struct kept){ 0 };
}

void
records_handle(void *arg, const struct perf_event_header *h)
{
	struct collect *c = arg;
	const uint8_t *r = (const uint8_t *)h;
	if (c->rec.calib)
		keep(&c->rec.kept, h);
	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		on_sample(c, h, r);
		break;
	case PERF_RECORD_MMAP2:
		on_mmap2(c, h, r);
		break;
	case PERF_RECORD_COMM:
		on_comm(c, h, r);
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		on_task(c, h, r);
		break;
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
	case PERF_RECORD_THROTTLE:
		on_lost(c, h, r);
		break;
	default:
		break; /* UNTHROTTLE and anything newer carry nothing we forward */
	}
}
