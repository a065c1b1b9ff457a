/* Option parsing for collect: every value is checked here, before any privileged work. */
#include <err.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "defaults.h"
#include "heap.h"
#include "physical.h"
#include "offcpu.h"
#include "opts.h"
#include "parse.h"

#define D RP_DEFAULT_TEXT

enum { OPT_PID = 256, OPT_DURATION, OPT_FREQ, OPT_UNWIND, OPT_PROFILES, OPT_KIND,
       OPT_RESUME, OPT_CACHE, OPT_MAX_THREADS, OPT_SAVE, OPT_LAUNCH, OPT_LAUNCH_FD,
       OPT_LAUNCH_ERR_FD, OPT_CHECK, OPT_PARTIAL, OPT_WINDOW, OPT_MAX_CACHE, OPT_DOCKER,
       OPT_K8S, OPT_CONTAINER, OPT_HOST, OPT_CPUID, OPT_REQUIRE_HW, OPT_LANDLOCK_ABI };

static const struct option longopts[] = {
	{ "pid", required_argument, NULL, OPT_PID },
	{ "docker-container", required_argument, NULL, OPT_DOCKER },
	{ "k8s-pod", required_argument, NULL, OPT_K8S },
	{ "container", required_argument, NULL, OPT_CONTAINER },
	{ "host", no_argument, NULL, OPT_HOST },
	{ "cpuid", required_argument, NULL, OPT_CPUID },
	{ "require-hardware-pmu", no_argument, NULL, OPT_REQUIRE_HW },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "cpu-frequency", required_argument, NULL, OPT_FREQ },
	{ "unwind", required_argument, NULL, OPT_UNWIND },
	{ "profiles", required_argument, NULL, OPT_PROFILES },
	{ "kind", required_argument, NULL, OPT_KIND },
	{ "resume", no_argument, NULL, OPT_RESUME },
	{ "module-cache", required_argument, NULL, OPT_CACHE },
	{ "max-module-cache", required_argument, NULL, OPT_MAX_CACHE },
	{ "max-threads", required_argument, NULL, OPT_MAX_THREADS },
	{ "save-stream", required_argument, NULL, OPT_SAVE },
	{ "launch", no_argument, NULL, OPT_LAUNCH },
	{ "check", no_argument, NULL, OPT_CHECK },
	{ "landlock-abi", no_argument, NULL, OPT_LANDLOCK_ABI },
	{ "allow-partial", no_argument, NULL, OPT_PARTIAL },
	{ "launch-stdout-fd", required_argument, NULL, OPT_LAUNCH_FD },
	{ "launch-stderr-fd", required_argument, NULL, OPT_LAUNCH_ERR_FD },
	{ "window", required_argument, NULL, OPT_WINDOW },
	{ "offcpu-phase", required_argument, NULL, OPT_OFFCPU_PHASE },
	{ "offcpu-min-duration-us", required_argument, NULL, OPT_OFFCPU_MIN },
	{ "offcpu-ring-buffer", required_argument, NULL, OPT_OFFCPU_RING },
	{ "offcpu-btf", required_argument, NULL, OPT_OFFCPU_BTF },
	{ "offcpu-probability", required_argument, NULL, OPT_OFFCPU_PROBABILITY },
	{ "alloc-interval", required_argument, NULL, OPT_ALLOC_INTERVAL },
	{ "allocator", required_argument, NULL, OPT_ALLOCATOR },
	{ "uprobes", required_argument, NULL, OPT_UPROBES },
	{ "physical-memory-probability", required_argument, NULL, OPT_PHYSICAL_PROBABILITY },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void
usage(void)
{
	printf("usage: collect --pid PID [options] > STREAM\n"
	       "       collect --host [options] > STREAM\n"
	       "       collect --launch [options] -- COMMAND [ARGS...] > STREAM\n"
	       "\n"
	       "Samples the CPU stacks of one running process (not its children), or of a\n"
	       "launched command and all its descendants, with perf events and writes the\n"
	       "framed event stream on stdout.  Must run as root.\n"
	       "\n"
	       "  --pid PID             process to profile\n"
	       "  --docker-container ID_OR_NAME  a Docker container: all its processes\n"
	       "                        (Engine API at $DOCKER_HOST, else /var/run/docker.sock)\n"
	       "  --k8s-pod NS/NAME     a Kubernetes Pod's application container (in-cluster)\n"
	       "  --container NAME      with --k8s-pod: the container of a multi-container Pod\n"
	       "  --host                every process of the machine (cpu profile; no target)\n"
	       "  --cpuid LIST          sample on these CPUs only (2,4-7); off-CPU: intervals\n"
	       "                        that start with a switch-out on one of them\n"
	       "  --require-hardware-pmu  fail instead of falling back to the CPU clock when\n"
	       "                        the hardware cycles event cannot be opened\n"
	       "  --launch              run COMMAND, stopped right after its exec until\n"
	       "                        sampling is enabled, and profile it until it exits;\n"
	       "                        its descendants too, through a cgroup v2 made under\n"
	       "                        $RUSTPROFILE_CGROUP_PARENT (default: the cgroup v2\n"
	       "                        mount) and removed at the end\n"
	       "  --launch-stdout-fd N  the command's stdout is fd N (default: its stderr)\n"
	       "  --launch-stderr-fd N  the command's stderr is fd N (default: collect's)\n"
	       "  --check               check the options and run the preflight (with --pid),\n"
	       "                        then exit without recording\n"
	       "  --landlock-abi        with --check: once the checks pass, print the kernel's\n"
	       "                        Landlock ABI version (0: none) for the driver\n"
	       "  --duration DUR        stop after DUR (10s, 2m, 500ms, 1h30m); 0 = until the\n"
	       "                        target exits or SIGINT/SIGTERM (default 0)\n"
	       "  --cpu-frequency HZ    samples per second per thread, 1..999 (default "
	       D(RP_DEFAULT_CPU_FREQUENCY) ")\n"
	       "  --unwind MODE         auto, fp or dwarf (default " RP_DEFAULT_UNWIND
	       ": a frame-pointer\n"
	       "                        calibration of up to 10 s / 64 samples chooses; dwarf\n"
	       "                        copies registers and 16 KiB of user stack per sample;\n"
	       "                        without the cpu profile none applies)\n"
	       "  --allow-partial       without unwind tables, keep leaf-only stacks; launch\n"
	       "                        without a cgroup: profile the command's pid only\n"
	       "  --window DUR          the recording's window length, written in every target\n"
	       "                        frame: aggregate cuts its windows by it (default "
	       RP_DEFAULT_WINDOW ");\n"
	       "                        with auto, a window whose frame-pointer stacks are\n"
	       "                        under 90%% usable switches to dwarf for good\n"
	       "  --profiles LIST       comma-separated: cpu, heap, off-cpu, physical-alloc\n"
	       "                        and/or physical-usage (default " RP_DEFAULT_PROFILES ")\n"
	       "  --alloc-interval BYTES  heap: mean bytes between allocation samples (4096,\n"
	       "                        512KiB, 1MiB; default " RP_DEFAULT_ALLOC_INTERVAL ")\n"
	       "  --allocator FAMILY    heap: auto, rust or system (default "
	       RP_DEFAULT_ALLOCATOR ")\n"
	       "  --uprobes HOW         heap: how the allocator probes attach: tracefs (a\n"
	       "                        uprobe each in uprobe_events) or multi (Linux 6.12+:\n"
	       "                        one uprobe_multi link each for entries and returns;\n"
	       "                        cheaper, but forked children that do not exec trap\n"
	       "                        at every allocator call; default "
	       HEAP_UPROBES_DEFAULT ")\n"
	       "  --physical-memory-probability P  physical-alloc, physical-usage: sample P%% of\n"
	       "                        the target's page allocations (1..100, default "
	       D(RP_DEFAULT_PHYSICAL_MEMORY_PROBABILITY) ")\n"
	       "  --offcpu-phase PHASE  blocked, runqueue or all (default " RP_DEFAULT_OFFCPU_PHASE
	       ")\n"
	       "  --offcpu-min-duration-us N  drop off-CPU intervals shorter than N us\n"
	       "                        (default " D(RP_DEFAULT_OFFCPU_MIN_DURATION_US) ")\n"
	       "  --offcpu-ring-buffer BYTES  BPF ring buffer, a power of two (default "
	       D(RP_DEFAULT_OFFCPU_RING_BUFFER) ")\n"
	       "  --offcpu-probability P  record P%% of the off-CPU switch-outs, at random, and\n"
	       "                        weigh them 100/P (1..100, default "
	       D(RP_DEFAULT_OFFCPU_PROBABILITY) ": all)\n"
	       "  --offcpu-btf FILE     kernel BTF for the eBPF programs (off-CPU, lifecycle) on a\n"
	       "                        kernel without /sys/kernel/btf/vmlinux\n"
	       "  --kind KIND           pid or launch, recorded in the stream (default pid)\n"
	       "  --resume              send SIGCONT to the target once sampling is enabled\n"
	       "  --module-cache DIR    copy mapped executables to DIR/.build-id/xx/yyyy...\n"
	       "                        so unprivileged stages can read them (what they read\n"
	       "                        of them, or a link where that costs nothing)\n"
	       "  --max-module-cache BYTES  what DIR may hold; once full, further modules\n"
	       "                        are not copied (default " D(RP_DEFAULT_MAX_MODULE_CACHE) ")\n"
	       "  --save-stream FILE    also write the stream to FILE\n"
	       "  -v, --verbose         log setup details to stderr\n"
	       "  -h, --help            show this help\n"
	       "\n"
	       "Stops on --duration, SIGINT/SIGTERM or target exit, writing an end frame, and\n"
	       "exits 0.  Example: collect --pid 1234 --duration 10s > cpu.rps\n");
	exit(0);
}

static uint64_t
num(const char *opt, const char *s, uint64_t min, uint64_t max)
{
	uint64_t v;
	char why[128];
	if (parse_u64(s, min, max, &v, why, sizeof(why)) < 0)
		errx(1, "%s: %s", opt, why);
	return v;
}

static void
opt_value(struct collect_opts *o, int c, const char *arg)
{
	char why[128];
	switch (c) {
	case OPT_PID:
		o->pid = (pid_t)num("--pid", arg, 1, INT_MAX);
		break;
	case OPT_DOCKER:
		o->docker = arg;
		break;
	case OPT_K8S:
		o->k8s_pod = arg;
		break;
	case OPT_CONTAINER:
		o->container = arg;
		break;
	case OPT_CPUID:
		cpusel_parse(&o->cpuid, arg);
		break;
	case OPT_DURATION:
		if (parse_duration(arg, &o->duration_ns, why, sizeof(why)) < 0)
			errx(1, "--duration: %s", why);
		break;
	case OPT_FREQ:
		o->freq = (unsigned)num("--cpu-frequency", arg, 1, 999);
		break;
	case OPT_UNWIND:
		if (strcmp(arg, "auto") != 0 && strcmp(arg, "fp") != 0 && strcmp(arg, "dwarf") != 0)
			errx(1, "--unwind: unknown mode '%s' (auto, fp or dwarf)", arg);
		o->unwind = strcmp(arg, "fp") == 0 ? "fp" : strcmp(arg, "dwarf") == 0 ? "dwarf" :
			    "auto";
		break;
	case OPT_PROFILES:
		offcpu_profiles(o, arg);
		break;
	case OPT_OFFCPU_PHASE:
	case OPT_OFFCPU_MIN:
	case OPT_OFFCPU_RING:
	case OPT_OFFCPU_BTF:
	case OPT_OFFCPU_PROBABILITY:
		offcpu_option(o, c, arg);
		break;
	case OPT_ALLOC_INTERVAL:
	case OPT_ALLOCATOR:
	case OPT_UPROBES:
		heap_option(o, c, arg);
		break;
	case OPT_PHYSICAL_PROBABILITY:
		physical_option(o, arg);
		break;
	case OPT_KIND:
		if (strcmp(arg, "pid") != 0 && strcmp(arg, "launch") != 0)
			errx(1, "--kind: unknown kind '%s' (pid or launch)", arg);
		o->kind = strcmp(arg, "pid") == 0 ? "pid" : "launch";
		break;
	case OPT_CACHE:
		o->module_cache = arg;
		break;
	case OPT_MAX_CACHE:
		o->max_module_cache = num("--max-module-cache", arg, 0, UINT64_MAX / 2);
		break;
	case OPT_MAX_THREADS:
		o->max_threads = (unsigned)num("--max-threads", arg, 1, 1u << 20);
		break;
	case OPT_SAVE:
		o->save_stream = arg;
		break;
	case OPT_WINDOW:
		if (parse_duration(arg, &o->window_ns, why, sizeof(why)) < 0)
			errx(1, "--window: %s", why);
		if (o->window_ns == 0)
			errx(1, "--window: must be above zero");
		break;
	case OPT_LAUNCH_FD:
		o->launch_stdout_fd = (int)num("--launch-stdout-fd", arg, 0, 1 << 20);
		break;
	case OPT_LAUNCH_ERR_FD:
		o->launch_stderr_fd = (int)num("--launch-stderr-fd", arg, 0, 1 << 20);
		break;
	}
}

/* --host: the machine's every process, sampled by CPU; the heap and off-CPU collectors
 * follow a target, which there is none of. */
static void
host(struct collect_opts *o, int profiles_given)
{
	if (!profiles_given)
		offcpu_profiles(o, "cpu"); /* the default's heap has no target */
	if (o->heap || o->offcpu || o->physical)
		errx(1, "--host records the cpu profile only (--profiles cpu)");
	o->kind = "host";
}

/* Exactly one of --pid, --docker-container, --k8s-pod and --host; --container with
 * --k8s-pod only. */
static void
targets(struct collect_opts *o, int profiles_given)
{
	int n = (o->pid != 0) + (o->docker != NULL) + (o->k8s_pod != NULL) + o->host;
	if (n == 0)
		errx(1, "--pid or --host is required (see --help)");
	if (n > 1)
		errx(1, "--pid, --docker-container, --k8s-pod and --host are mutually exclusive");
	if (o->host)
		host(o, profiles_given);
	if (o->container && !o->k8s_pod)
		errx(1, "--container is only valid with --k8s-pod");
	if (o->docker)
		o->kind = "docker";
	else if (o->k8s_pod)
		o->kind = "kubernetes";
}

void
opts_parse(int argc, char **argv, struct collect_opts *o)
{
	*o = (struct collect_opts){ .freq = RP_DEFAULT_CPU_FREQUENCY, .kind = "pid",
				    .max_threads = RP_DEFAULT_MAX_THREADS, .launch_stdout_fd = -1,
				    .launch_stderr_fd = -1,
				    .window_ns = rp_default_ns(RP_DEFAULT_WINDOW),
				    .max_module_cache = RP_DEFAULT_MAX_MODULE_CACHE };
	/* The word defaults go through the options' own parsers. */
	opt_value(o, OPT_UNWIND, RP_DEFAULT_UNWIND);
	offcpu_defaults(o);
	heap_defaults(o);
	o->physical_percent = RP_DEFAULT_PHYSICAL_MEMORY_PROBABILITY;
	int launch = 0, profiles_given = 0, percent_given = 0;
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:hv", longopts, NULL)) != -1) {
		if (c == 'h')
			usage();
		else if (c == 'v')
			o->verbose = 1;
		else if (c == OPT_RESUME)
			o->resume = 1;
		else if (c == OPT_LAUNCH)
			launch = 1;
		else if (c == OPT_CHECK)
			o->check = 1;
		else if (c == OPT_LANDLOCK_ABI)
			o->landlock_abi = 1;
		else if (c == OPT_PARTIAL)
			o->allow_partial = 1;
		else if (c == OPT_HOST)
			o->host = 1;
		else if (c == OPT_REQUIRE_HW)
			o->require_hw = 1;
		else if (c == ':')
			errx(1, "option '%s' needs a value", argv[optind - 1]);
		else if (c == '?')
			errx(1, "unknown option '%s' (see --help)", argv[optind - 1]);
		else
			opt_value(o, c, optarg);
		profiles_given |= c == OPT_PROFILES;
		percent_given |= c == OPT_PHYSICAL_PROBABILITY;
	}
	if (o->landlock_abi && !o->check)
		errx(1, "--landlock-abi applies to --check only");
	if (percent_given && !o->physical)
		errx(1, "--physical-memory-probability applies to the physical-alloc and "
		     "physical-usage profiles only");
	if (launch) {
		if (o->pid || o->docker || o->k8s_pod || o->host)
			errx(1, "--launch and a target selector are mutually exclusive");
		if (optind >= argc && !o->check)
			errx(1, "--launch needs a command after --");
		o->launch_argv = argv + optind;
		o->kind = "launch";
		return;
	}
	if (optind < argc)
		errx(1, "unexpected argument '%s' (see --help)", argv[optind]);
	targets(o, profiles_given);
}
