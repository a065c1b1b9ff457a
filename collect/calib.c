#include "calib.h"

#include <err.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "clock.h"
#include "fpchain.h"
#include "procfs.h"
#include "stream.h"

static int
add_range(const struct procmap *m, void *arg)
{
	struct calib *k = arg;
	if (m->prot & PROT_EXEC)
		ranges_add(&k->maps, m->start, m->end);
	return 0;
}

void
calib_sample(struct calib *k, uint32_t pid, const uint64_t *uips, unsigned nuser)
{
	if (k->nchains + nuser + 2 > k->capchains) {
		size_t cap = k->capchains ? k->capchains * 2 : 4096;
		while (cap < k->nchains + nuser + 2)
			cap *= 2;
		uint64_t *p = realloc(k->chains, cap * sizeof(*p));
		if (!p)
			errx(1, "out of memory");
		k->chains = p;
		k->capchains = cap;
	}
	k->chains[k->nchains++] = pid;
	k->chains[k->nchains++] = nuser;
	memcpy(k->chains + k->nchains, uips, nuser * sizeof(*uips));
	k->nchains += nuser;
	k->samples++;
}

static void
judge(struct calib *k, const uint64_t *uips, unsigned nuser)
{
	unsigned good = 0;

	for (unsigned i = 0; i < nuser; i++) {
		/* Above the leaf the chain holds return addresses: the call is the byte before. */
		int in = ranges_has(&k->maps, i == 0 ? uips[0] : uips[i] - 1);
		k->addrs++;
		k->mapped += (uint64_t)in;
		if (in && good == i)
			good++;
	}
	k->deep += good >= 3;
	k->cycles += (uint32_t)fpchain_cyclic(uips, nuser);
}

static void
reset(struct calib *k)
{
	k->samples = k->deep = k->cycles = 0;
	k->addrs = k->mapped = 0;
	k->nchains = 0;
}

static void
add_fact(struct calib *k, struct calib_fact f)
{
	if (k->nfacts == k->capfacts) {
		size_t cap = k->capfacts ? k->capfacts * 2 : 256;
		struct calib_fact *p = realloc(k->facts, cap * sizeof(*p));
		if (!p)
			errx(1, "out of memory");
		k->facts = p;
		k->capfacts = cap;
	}
	k->facts[k->nfacts++] = f;
}

void
calib_map(struct calib *k, uint32_t pid, uint64_t start, uint64_t end)
{
	add_fact(k, (struct calib_fact){ .kind = FACT_MAP, .pid = pid, .start = start,
					 .end = end });
}

void
calib_fork(struct calib *k, uint32_t pid, uint32_t ppid)
{
	add_fact(k, (struct calib_fact){ .kind = FACT_FORK, .pid = pid, .ppid = ppid });
}

void
calib_exec(struct calib *k, uint32_t pid)
{
	add_fact(k, (struct calib_fact){ .kind = FACT_EXEC, .pid = pid });
	if (pid == (uint32_t)k->pid)
		k->exec = 1;
}

static int
snap_range(const struct procmap *m, void *arg)
{
	struct calib *k = arg;
	if (m->prot & PROT_EXEC)
		calib_map(k, (uint32_t)k->pid, m->start, m->end);
	return 0;
}

/* The executable ranges of pid: what /proc still shows, the mappings its records showed,
 * and for a process that never executed an image of its own, its parent's, which a fork
 * copies (a short-lived child of launch's cgroup is judged even when it is gone). */
static void
ranges_of(struct calib *k, uint32_t pid, int depth)
{
	uint32_t parent = 0;
	int execd = 0;
	(void)procfs_maps((pid_t)pid, add_range, k);
	for (size_t i = 0; i < k->nfacts; i++) {
		const struct calib_fact *f = &k->facts[i];
		if (f->pid != pid)
			continue;
		if (f->kind == FACT_MAP)
			ranges_add(&k->maps, f->start, f->end);
		else if (f->kind == FACT_EXEC)
			execd = 1;
		else
			parent = f->ppid;
	}
	if (!execd && parent && parent != pid && depth < 16)
		ranges_of(k, parent, depth + 1);
}

/* Judges the chains of one process against its mappings. */
static void
judge_pid(struct calib *k, uint32_t pid)
{
	ranges_clear(&k->maps);
	ranges_of(k, pid, 0);
	for (size_t i = 0; i < k->nchains; i += 2 + k->chains[i + 1])
		if (k->chains[i] == pid)
			judge(k, k->chains + i + 2, (unsigned)k->chains[i + 1]);
}

static void
reason(struct calib *k, uint32_t mp, uint32_t dp)
{
	k->accepted = 0;
	if (k->samples < CALIB_MIN_SAMPLES)
		snprintf(k->reason, sizeof(k->reason), "only %u samples in %llu.%llu seconds "
			 "(need %d)", k->samples, (unsigned long long)(k->elapsed_ns / 1000000000u),
			 (unsigned long long)(k->elapsed_ns / 100000000u % 10), CALIB_MIN_SAMPLES);
	else if (mp < CALIB_MAPPED_PERMILLE)
		snprintf(k->reason, sizeof(k->reason), "%u.%u%% of user addresses in executable "
			 "mappings (need 90%%)", mp / 10, mp % 10);
	else if (dp < CALIB_DEEP_PERMILLE)
		snprintf(k->reason, sizeof(k->reason), "%u.%u%% of samples reach three frames "
			 "(need 70%%)", dp / 10, dp % 10);
	else if (k->cycles)
		snprintf(k->reason, sizeof(k->reason), "%u samples with an address cycle",
			 k->cycles);
	else {
		k->accepted = 1;
		snprintf(k->reason, sizeof(k->reason), "%u samples, %u.%u%% of addresses mapped, "
			 "%u.%u%% reach three frames", k->samples, mp / 10, mp % 10, dp / 10,
			 dp % 10);
	}
}

static void
verdict(struct calib *k)
{
	/* Each process once, in the order its first sample came. */
	for (size_t i = 0; i < k->nchains; i += 2 + k->chains[i + 1]) {
		int seen = 0;
		for (size_t j = 0; j < i && !seen; j += 2 + k->chains[j + 1])
			seen = k->chains[j] == k->chains[i];
		if (!seen)
			judge_pid(k, (uint32_t)k->chains[i]);
	}

	uint32_t mp = k->addrs ? (uint32_t)(k->mapped * 1000 / k->addrs) : 0;
	uint32_t dp = k->samples ? k->deep * 1000 / k->samples : 0;
	reason(k, mp, dp);
	k->result = (struct calib_result){ k->samples, mp, dp, k->cycles,
					   k->accepted ? "accepted" : "rejected" };
}

static int
signalled(void)
{
	sigset_t set;
	if (sigpending(&set) < 0)
		return 0;
	return sigismember(&set, SIGINT) == 1 || sigismember(&set, SIGTERM) == 1;
}

/* Why the calibration must stop before its samples are in, or 0. */
static int
early_end(const struct calib_env *env, int exited)
{
	if (exited)
		return END_TARGET_EXIT;
	if (signalled())
		return END_SIGNAL;
	if (env->deadline_ns && collect_now() >= env->deadline_ns)
		return END_DURATION;
	return 0;
}

/* The image the calibration is for: its mappings as they are (a launched command's image
 * was mapped before the events opened) and whether DWARF would have tables to walk. */
static void
image(struct calib *k)
{
	(void)procfs_maps(k->pid, snap_range, k);
	k->tables = calib_has_unwind_tables(k->pid);
}

int
calib_run(struct calib *k, const struct calib_env *env)
{
	struct perf_set *perf = env->perf;
	int end = 0;
	reset(k);
	k->pid = env->pid;
	image(k);
	uint64_t t0 = collect_now();
	for (;;) {
		struct pollfd p = { env->pidfd, POLLIN, 0 };
		int exited = poll(&p, 1, 50) > 0 && (p.revents & POLLIN);
		end = early_end(env, exited);
		k->exec = 0;
		/* The rings are read once more after an end: the last samples count too. */
		for (size_t i = 0; i < perf->nrings; i++)
			perf_ring_read(perf, &perf->rings[i], env->handle, env->arg, 1);
		if (env->tick)
			env->tick(env->arg);
		k->elapsed_ns = collect_now() - t0;
		/* A new image: the verdict is for the old one, whose samples are in; the loop
		 * handles the exec (the COMM record goes out with the rest) and calibrates the
		 * new image as after any exec. */
		if (end || k->exec || k->samples >= CALIB_MIN_SAMPLES || k->elapsed_ns >= CALIB_MAX_NS)
			break;
	}
	verdict(k);
	return end;
}

static int
has_section(Elf *e, const char *want)
{
	size_t shstrndx;
	Elf_Scn *s = NULL;
	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		return 0;
	while ((s = elf_nextscn(e, s))) {
		GElf_Shdr sh;
		const char *name;
		if (gelf_getshdr(s, &sh) && sh.sh_type != SHT_NOBITS &&
		    (name = elf_strptr(e, shstrndx, sh.sh_name)) && strcmp(name, want) == 0)
			return 1;
	}
	return 0;
}

int
calib_has_unwind_tables(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC), yes = 0;
	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e)
		yes = has_section(e, ".eh_frame") || has_section(e, ".debug_frame");
	elf_end(e);
	close(fd);
	return yes;
}

void
calib_free(struct calib *k)
{
	ranges_free(&k->maps);
	free(k->chains);
	free(k->facts);
	k->chains = NULL;
	k->facts = NULL;
	/* The calibration runs again after an exec with the same struct. */
	k->nchains = k->capchains = 0;
	k->nfacts = k->capfacts = 0;
}
