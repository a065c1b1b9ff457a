/*
 * The CPU profile's event (peer guide, "C, C++, and Go"): the hardware cycles event in
 * frequency mode where the machine has a PMU, else the CPU clock (a virtual machine
 * without a virtual PMU: opening cycles fails with ENOENT or EOPNOTSUPP).
 * --require-hardware-pmu makes the fallback an error: the CPU clock is a timer interrupt,
 * blind to code that runs with interrupts disabled.  The choice goes into the target frame
 * (cpu.event and cpu.event_reason in diagnostics).  Cycle samples are counted in cycles;
 * emit-pprof adds a nanoseconds estimate (docs/host.md).
 */
#ifndef COLLECT_EVSOURCE_H
#define COLLECT_EVSOURCE_H

struct evsource {
	int cycles;             /* 1: cycles; 0: the CPU clock */
	const char *name;       /* "cycles" or "cpu-clock" ("" without a cpu profile) */
	char reason[200];       /* why not cycles, "" when cycles */
};

/* Probes the cycles event unless there is no cpu profile (no_cpu); exits with one line when
 * require_hw is set and it cannot be opened. */
void evsource_choose(struct evsource *e, unsigned freq, int no_cpu, int require_hw);

#endif
