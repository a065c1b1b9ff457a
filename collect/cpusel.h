/*
 * --cpuid LIST: the CPUs a recording samples (peer guide, "C, C++, and Go").  CPU samples
 * are taken on those CPUs only (the events are opened there alone), and the off-CPU
 * program keeps the intervals whose switch-out happened on one of them; a later wakeup or
 * switch-in elsewhere does not change that.  Every CPU of the list must be online now.
 */
#ifndef COLLECT_CPUSEL_H
#define COLLECT_CPUSEL_H

#include "cpulist.h"

struct cpusel {
	int set;                /* --cpuid was given */
	struct cpulist cpus;    /* its CPUs */
	char text[256];         /* canonical, for the target frame; "" without --cpuid */
};

/* Parses and checks arg (exits with one line on an empty, malformed or reversed list, or a
 * CPU that is not online). */
void cpusel_parse(struct cpusel *s, const char *arg);

#endif
