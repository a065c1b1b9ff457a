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

/* Judges the chains of one process against its mappings; a process that is gone by now
 * (a short-lived child in the cgroup scope) cannot be judged and its samples do not count. */
static void
judge_pid(struct calib *k, uint32_t pid)
{
	ranges_clear(&k->maps);
	if (procfs_maps((pid_t)pid, add_range, k) < 0) {
		if (pid == (uint32_t)k->pid)
			err(1, "cannot read the mappings of pid %d", (int)k->pid);
		for (size_t i = 0; i < k->nchains; i += 2 + k->chains[i + 1])
			k->samples -= k->chains[i] == pid;
		return;
	}
	for (size_t i = 0; i < k->nchains; i += 2 + k->chains[i + 1])
		if (k->chains[i] == pid)
			judge(k, k->chains + i + 2, (unsigned)k->chains[i + 1]);
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

	k->accepted = 0;
	if (k->samples < CALIB_MIN_SAMPLES)
		snprintf(k->reason, sizeof(k->reason), "only %u samples in %llu seconds (need %d)",
			 k->samples, CALIB_MAX_NS / 1000000000ull, CALIB_MIN_SAMPLES);
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

/* Why a calibration after the start of the recording must stop, or 0. */
static int
soft_end(const struct calib_env *env, int exited)
{
	if (exited)
		return END_TARGET_EXIT;
	if (signalled())
		return END_SIGNAL;
	if (env->deadline_ns && collect_now() >= env->deadline_ns)
		return END_DURATION;
	return 0;
}

void
calib_exec(struct calib *k)
{
	k->exec = 1;
}

int
calib_run(struct calib *k, const struct calib_env *env)
{
	struct perf_set *perf = env->perf;
	reset(k);
	k->pid = env->pid;
	uint64_t t0 = collect_now();
	for (;;) {
		struct pollfd p = { env->pidfd, POLLIN, 0 };
		int exited = poll(&p, 1, 50) > 0 && (p.revents & POLLIN);
		int end = env->soft ? soft_end(env, exited) : 0;
		if (end)
			return end;
		if (exited)
			errx(1, "the target exited during the unwind calibration");
		if (signalled())
			errx(1, "interrupted during the unwind calibration");
		k->exec = 0;
		for (size_t i = 0; i < perf->nrings; i++)
			perf_ring_read(perf, &perf->rings[i], env->handle, env->arg, 1);
		if (k->exec) {
			/* A new image: check it again and start over, as the manual says. */
			env->again(env->arg);
			reset(k);
			t0 = collect_now();
			continue;
		}
		if (k->samples >= CALIB_MIN_SAMPLES || collect_now() - t0 >= CALIB_MAX_NS)
			break;
	}
	verdict(k);
	return 0;
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
	k->chains = NULL;
	/* The calibration runs again after an exec with the same struct. */
	k->nchains = k->capchains = 0;
}
