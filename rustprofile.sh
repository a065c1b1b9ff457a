#!/bin/bash
# rustprofile: wires the profiler's stages into a pipeline for each subcommand.
#
# USAGE
#   rustprofile.sh check (--pid PID | --docker-container ID_OR_NAME |
#                         --k8s-pod NAMESPACE/NAME [--container NAME]) [--json]
#                         [--symbol-dir DIR]... [--debuginfod URL]
#   rustprofile.sh record (--pid PID | --docker-container ID_OR_NAME |
#                          --k8s-pod NAMESPACE/NAME [--container NAME] | --host) [OPTIONS]
#   rustprofile.sh launch [OPTIONS] -- COMMAND [ARGS...]
#   rustprofile.sh replay --input STREAM [OPTIONS]
#   rustprofile.sh import --input CAPTURE [--format auto|perf-data|simpleperf] [OPTIONS]
#
# record/launch run, as root:
#   collect ──▶ [tee FILE] ──▶ unwind ──▶ aggregate ──▶ emit-pprof ──▶ commit ──▶ "wrote PATH"
# Every stage after collect runs as whoever asked for the files (the sudo caller, else the
# owner of the output directory), with no capabilities, no-new-privs, and, in the stage
# itself, a Landlock ruleset that lets it write only beneath the output directory (README,
# "Privileges").  replay feeds a saved stream to unwind; import turns a perf.data or
# simpleperf capture into the same stream (import stage first).  The same pipeline can be
# typed by hand; see README.md.
#
# Option values are kept as single arguments all the way to the stages: nothing is re-split.
# Every stage's stderr goes to a file of its own; at the end the driver shows the warnings of
# the stages that succeeded and the reason of the first stage that failed for a reason of its
# own (a stage whose reader stopped exits 3 or dies of SIGPIPE, one whose input ended early
# exits 4: those only echo another stage's failure).
#
# EXIT STATUS
#   0  every window was published whole
#   1  a stage or the driver failed (one line says which and why)
#   2  usage: no command
#   3  every window's pprof and diagnostics were published, but derived files (SVG, Firefox)
#      of some windows were skipped: an emitter had not finished them within the completion
#      budget after --duration or a stop (the warnings name them)
#
# EXAMPLE
#   sudo ./rustprofile.sh record --pid 1234 --duration 10s --window 2s --output ./profiles
#   wrote ./profiles/cpu-5f0c…-000000-1732870000000000000.pb.gz
#   wrote ./profiles/diagnostics-5f0c…-000000-1732870000000000000.json
set -eu

# A run started with SIGINT or SIGTERM ignored (a script's `cmd &`, nohup) could not trap
# them (a shell may not trap what was ignored on entry): start again with both at default.
# The kernel's mask of ignored signals says so without a process (the driver's start is
# timed): bit 1 is SIGINT, bit 14 SIGTERM.
ignored=0
while read -r k v; do [ "$k" != SigIgn: ] || { ignored=$((16#$v)); break; }; done </proc/self/status
if [ $((ignored & 0x4002)) -ne 0 ] && [ -z "${RUSTPROFILE_SIGNALS_RESET:-}" ]; then
	RUSTPROFILE_SIGNALS_RESET=1 exec env --default-signal=INT,TERM "$BASH" "$0" "$@"
fi
unset RUSTPROFILE_SIGNALS_RESET ignored

prog=rustprofile
# mkdir, mkfifo and rm as bash's loadable builtins where they are installed (Debian's
# bash-builtins): a recording makes its directories and FIFOs and removes its work
# directory, and each would otherwise be a process of its own (the start is timed).
for b in mkdir mkfifo rm; do
	[ ! -f "/usr/lib/bash/$b" ] || enable -f "/usr/lib/bash/$b" "$b" 2>/dev/null || true
done
unset b
# Installed, PREFIX/bin/rustprofile is a link to PREFIX/libexec/rustprofile/rustprofile.sh.
# parent_of PATH: sets parent to dirname's answer, without its process or a subshell's.
parent_of() {
	local p=$1
	while [ "${#p}" -gt 1 ] && [ "${p%/}" != "$p" ]; do p=${p%/}; done
	case $p in
	*/*) p=${p%/*}
		while [ "${#p}" -gt 1 ] && [ "${p%/}" != "$p" ]; do p=${p%/}; done
		parent=${p:-/} ;;
	*) parent=. ;;
	esac
}
self=$0
[ ! -L "$0" ] || self=$(readlink -f -- "$0" 2>/dev/null || echo "$0")
parent_of "$self"
case $parent in
/*) here=$parent ;;
.) here=$PWD ;;
*) here=$PWD/$parent ;;
esac
if [ -n "${RP_BIN:-}" ]; then
	bin=$RP_BIN
elif [ -f "$here/collect" ] && [ -x "$here/collect" ]; then
	bin=$here
else
	bin=$here/.output/bin
fi
# The defaults the stages share, one definition each (lib/defaults.h; make writes defaults.sh).
[ -r "$bin/defaults.sh" ] || { echo "$prog: $bin/defaults.sh not found (run make)" >&2; exit 1; }
# shellcheck source=/dev/null
. "$bin/defaults.sh"

usage() {
	cat <<EOF
usage: $prog record (--pid PID | --docker-container ID_OR_NAME |
              --k8s-pod NAMESPACE/NAME [--container NAME] | --host) [OPTIONS]
       $prog launch [OPTIONS] -- COMMAND [ARGS...]
       $prog replay --input STREAM [--module-cache DIR] [OPTIONS]
       $prog import --input CAPTURE [--format FORMAT] [--event NAME] [--kallsyms FILE]
              [OPTIONS]
       $prog check (--pid PID | --docker-container ID_OR_NAME |
              --k8s-pod NAMESPACE/NAME [--container NAME]) [--json]
              [--symbol-dir DIR]... [--debuginfod URL]
       $prog serve (--profile FILE | --directory DIR) [--listen HOST:PORT]
              [--symbol-dir DIR]... [--source-dir DIR]... [--debuginfod URL]
              [--cors-origin ORIGIN] [--bearer-token-file FILE | --bearer-token TOKEN]

Options (defaults in brackets):
  --pid PID                      process to profile (record)
  --docker-container ID_OR_NAME  Docker container to profile, all its processes (record;
                                 Engine API at \$DOCKER_HOST, else /var/run/docker.sock)
  --k8s-pod NAMESPACE/NAME       Kubernetes Pod to profile, from the node's profiler Pod
                                 (record; in-cluster service account, NODE_NAME)
  --container NAME               with --k8s-pod: the Pod's application container
  --host                         every process of the machine, sampled by CPU (record;
                                 cpu profile only; docs/host.md)
  --cpuid LIST                   sample on these CPUs only, e.g. 2,4-7 (record, launch;
                                 off-cpu: intervals that start with a switch-out there)
  --require-hardware-pmu         fail instead of sampling the CPU clock when the hardware
                                 cycles event cannot be opened (no PMU)
  --duration DURATION            how long to record; 0 = until exit or signal [$RP_DEFAULT_DURATION]
  --window DURATION              window length, > 0 [$RP_DEFAULT_WINDOW; replay: the recorded length]
  --output DIR                   where windows are published [$RP_DEFAULT_OUTPUT]
  --profiles LIST                cpu, heap, off-cpu, physical-alloc and/or physical-usage,
                                 comma-separated [$RP_DEFAULT_PROFILES]
  --alloc-interval BYTES         heap: mean bytes between allocation samples (4096,
                                 512KiB, 1MiB) [$RP_DEFAULT_ALLOC_INTERVAL]
  --allocator FAMILY             heap: auto, rust or system; auto prefers rust [$RP_DEFAULT_ALLOCATOR]
  --physical-memory-probability P  physical-alloc, physical-usage: sample P% of the
                                 target's page allocations (docs/physical.md) [$RP_DEFAULT_PHYSICAL_MEMORY_PROBABILITY]
  --offcpu-phase PHASE           off-cpu: blocked, runqueue or all [$RP_DEFAULT_OFFCPU_PHASE]
  --offcpu-min-duration-us N     off-cpu: ignore intervals shorter than N microseconds [$RP_DEFAULT_OFFCPU_MIN_DURATION_US]
  --offcpu-ring-buffer BYTES     off-cpu: BPF ring buffer, a power of two [$RP_DEFAULT_OFFCPU_RING_BUFFER]
  --offcpu-btf FILE              off-cpu: kernel BTF, for a kernel without it built in
  --offcpu-probability P         off-cpu: record P% of the switch-outs at random, weighed
                                 100/P: less overhead, estimated values [$RP_DEFAULT_OFFCPU_PROBABILITY]
  --unwind MODE                  auto, fp or dwarf; auto calibrates frame pointers for up to
                                 10 s / 64 samples and falls back to DWARF; off-cpu
                                 alone has no calibration [$RP_DEFAULT_UNWIND]
  --allow-partial                without unwind tables, keep leaf-only stacks; launch
                                 without a cgroup v2: only the command's own pid; a heap
                                 or off-cpu profile that cannot run is left out
  --cpu-frequency HZ             samples per second, 1..999 [$RP_DEFAULT_CPU_FREQUENCY]
  --keep-windows N               windows kept from this session, > 0 [$RP_DEFAULT_KEEP_WINDOWS]
  --max-stacks N                 distinct stacks per window [$RP_DEFAULT_MAX_STACKS]
  --max-pending-events N         reorder buffer bound [$RP_DEFAULT_MAX_PENDING_EVENTS]
  --event-reorder-window DUR     tolerated timestamp skew, <= window [$RP_DEFAULT_EVENT_REORDER_WINDOW]
  --symbol-dir DIR               extra debug-file directory, must exist (repeatable)
  --debuginfod URL               fetch debug files missing locally from this debuginfod
                                 server (http:// or https://); no network without it
  --svg                          also write a static SVG flame graph per window
  --collapsed                    also write folded stacks (FlameGraph format) per window
  --json-windows                 also write each window's profiles as JSON: stacks, labels,
                                 values and signed heap deltas (docs/json-windows.schema.json)
  --firefox-profile FORMAT       also write a Firefox Profiler profile per window: json or jslb
  --max-timeline-samples N       timestamped samples (and allocations) kept per Firefox window [$RP_DEFAULT_MAX_TIMELINE_SAMPLES]
  --completion-budget DURATION   record/launch with --svg or --firefox-profile: how long the
                                 last windows may wait for those files after --duration or
                                 a stop; then they are published without them [$RP_DEFAULT_COMPLETION_BUDGET]
  --otlp-endpoint URL            also export each window as OTLP Profiles over HTTP (no
                                 export without one, here or in OTEL_EXPORTER_OTLP_*)
  --otlp-header KEY=VALUE        an HTTP header of the export (repeatable)
  --otlp-timeout DURATION        per export attempt [$RP_DEFAULT_OTLP_TIMEOUT]
  --otlp-compression MODE        none or gzip [$RP_DEFAULT_OTLP_COMPRESSION]
  --otlp-ca PATH                 a PEM CA file trusted for an https endpoint
  --resource-attribute KEY=VALUE an OTLP resource attribute (repeatable)
  --otlp-timeline                export the timestamped CPU samples instead of the
                                 aggregated CPU profile
  --save-stream FILE             also keep collect's event stream in FILE (record, launch)
  --input FILE                   saved stream (replay) or perf.data/simpleperf capture (import)
  --format FORMAT                auto, perf-data or simpleperf (import) [$RP_DEFAULT_FORMAT]
  --event NAME                   the capture's sampling event to import (import)
  --kallsyms FILE                the recording kernel's /proc/kallsyms, to name kernel
                                 frames of a capture from another kernel (import)
  --module-cache DIR             module copies for replay [<input dir>/.modules]
  --max-module-cache BYTES       record/launch: what <output>/.modules may hold [$RP_DEFAULT_MAX_MODULE_CACHE]
  --debug-cache DIR              keep separate debug files there with their DWARF inflated,
                                 for later runs; none: no cache [~/.cache/rustprofile/debug]
  --max-debug-cache BYTES        what the debug cache may hold [$RP_DEFAULT_MAX_DEBUG_CACHE]
  -h, --help                     this text
Durations (humantime): 500ms, 10s, 2m, 1h30m, '1h 30m', 2days, 1w.
Exit status: 0 published, 1 failed, 3 published but derived files skipped (see README.md).
check reports what record would find about the target (--json: the CheckReport, schema
version 3; docs/check.md) and exits 1 when the report holds an error.
serve answers the Firefox Profiler: GET /profile.json, the gallery at GET / of a
--directory, and POST /symbolicate/v5, /source/v1, /asm/v1 (docs/serve.md); --listen
defaults to 127.0.0.1:8080, and one that is not loopback needs a bearer token (a file, or
RUSTPROFILE_BEARER_TOKEN, rather than --bearer-token, which ps shows).
EOF
}

err() {
	echo "$prog: $*" >&2
	exit 1
}

# ---- options ----
cmd=${1:-}
[ -n "$cmd" ] || { usage >&2; exit 2; }
shift
case $cmd in
check | record | launch | replay | import | serve) ;;
-h | --help | help) usage; exit 0 ;;
*) err "unknown command '$cmd' (expected check, record, launch, replay, import or serve)" ;;
esac

# check: one target selector and check's own options, then the check stage reports (as
# root: it runs record's preflight and eBPF load probes; nothing is recorded).
check_command() {
	local selectors=0 args=() pid='' container=''
	while [ $# -gt 0 ]; do
		case $1 in
		--pid) [ $# -ge 2 ] || err "option '$1' needs a value"
			pid=$2; args+=("$1" "$2"); selectors=$((selectors + 1)); shift 2 ;;
		--docker-container | --k8s-pod) [ $# -ge 2 ] || err "option '$1' needs a value"
			args+=("$1" "$2"); selectors=$((selectors + 1)); shift 2 ;;
		--container) [ $# -ge 2 ] || err "option '$1' needs a value"
			container=$2; args+=("$1" "$2"); shift 2 ;;
		--json) args+=(--json); shift ;;
		--symbol-dir | --debuginfod) [ $# -ge 2 ] || err "option '$1' needs a value"
			args+=("$1" "$2"); shift 2 ;;
		-h | --help) usage; exit 0 ;;
		*) err "check: unknown option '$1'" ;;
		esac
	done
	[ "$selectors" -le 1 ] || err "give exactly one of --pid, --docker-container, --k8s-pod"
	[ "$selectors" -eq 1 ] ||
		err "check needs a target: --pid PID, --docker-container ID_OR_NAME or --k8s-pod NAMESPACE/NAME"
	[ -z "$container" ] || [[ " ${args[*]} " == *" --k8s-pod "* ]] ||
		err "--container is only valid with --k8s-pod"
	case $pid in *[!0-9]* | 0*) err "--pid: '$pid' is not a process id" ;; esac
	exec "$bin/check" "${args[@]}"
}
[ "$cmd" != check ] || check_command "$@"

# serve: its options go to the serve stage as they are (it checks them).  As root it runs
# as the owner of what it serves (behind sudo: the caller), with no capability.
serve_command() {
	local what='' a=("$@")
	while [ $# -gt 0 ]; do
		case $1 in
		--profile | --directory) [ $# -ge 2 ] || err "option '$1' needs a value"
			what=$2; shift 2 ;;
		--listen | --symbol-dir | --source-dir | --debuginfod | --cors-origin | \
		--bearer-token | --bearer-token-file)
			[ $# -ge 2 ] || err "option '$1' needs a value"; shift 2 ;;
		-h | --help) usage; exit 0 ;;
		*) err "serve: unknown option '$1'" ;;
		esac
	done
	[ -n "$what" ] || err "serve needs --profile FILE or --directory DIR"
	[ -e "$what" ] || err "serve: '$what' does not exist"
	if [ "$EUID" -eq 0 ]; then
		local u g
		if [ -n "${SUDO_UID:-}" ] && [ "$SUDO_UID" != 0 ]; then
			u=$SUDO_UID g=${SUDO_GID:-$SUDO_UID}
		else
			u=$(stat -c %u -- "$what") g=$(stat -c %g -- "$what")
		fi
		exec "$bin/serve" --run-as "$u:$g" "${a[@]}"
	fi
	exec "$bin/serve" "${a[@]}"
}
[ "$cmd" != serve ] || serve_command "$@"

format=$RP_DEFAULT_FORMAT event='' kallsyms='' pid='' duration=$RP_DEFAULT_DURATION window=''
output=$RP_DEFAULT_OUTPUT profiles=$RP_DEFAULT_PROFILES unwind=$RP_DEFAULT_UNWIND
freq=$RP_DEFAULT_CPU_FREQUENCY keep=$RP_DEFAULT_KEEP_WINDOWS max_stacks=$RP_DEFAULT_MAX_STACKS
max_pending=$RP_DEFAULT_MAX_PENDING_EVENTS reorder=$RP_DEFAULT_EVENT_REORDER_WINDOW reorder_given=''
save='' input=''
cache='' max_threads='' max_cache='' selectors=0 partial='' svg='' collapsed='' jsonwin='' firefox=''
timeline=$RP_DEFAULT_MAX_TIMELINE_SAMPLES budget=$RP_DEFAULT_COMPLETION_BUDGET
docker='' k8s_pod='' k8s_container='' host='' cpuid='' cpuid_set='' require_hw='' profiles_given=''
symdirs=() profile_opts=() debuginfod='' otlp_opts=()
debug_cache='' max_debug_cache='' dcgiven=''
need() { [ $# -ge 2 ] || err "option '$1' needs a value"; }
while [ $# -gt 0 ]; do
	case $1 in
	--pid) need "$@"; pid=$2; selectors=$((selectors + 1)); shift 2 ;;
	--docker-container) need "$@"; docker=$2; selectors=$((selectors + 1)); shift 2 ;;
	--k8s-pod) need "$@"; k8s_pod=$2; selectors=$((selectors + 1)); shift 2 ;;
	--container) need "$@"; k8s_container=$2; shift 2 ;;
	--host) host=1; selectors=$((selectors + 1)); shift ;;
	--cpuid) need "$@"; cpuid=$2; cpuid_set=1; shift 2 ;;
	--require-hardware-pmu) require_hw=1; shift ;;
	--duration) need "$@"; duration=$2; shift 2 ;;
	--window) need "$@"; window=$2; shift 2 ;;
	--output) need "$@"; output=$2; shift 2 ;;
	--profiles) need "$@"; profiles=$2; profiles_given=1; shift 2 ;;
	--offcpu-phase | --offcpu-min-duration-us | --offcpu-ring-buffer | --offcpu-btf | \
	--offcpu-probability | --alloc-interval | --allocator | --physical-memory-probability)
		need "$@"; profile_opts+=("$1" "$2"); shift 2 ;;
	--unwind) need "$@"; unwind=$2; shift 2 ;;
	--cpu-frequency) need "$@"; freq=$2; shift 2 ;;
	--keep-windows) need "$@"; keep=$2; shift 2 ;;
	--max-stacks) need "$@"; max_stacks=$2; shift 2 ;;
	--max-pending-events) need "$@"; max_pending=$2; shift 2 ;;
	--event-reorder-window) need "$@"; reorder=$2 reorder_given=1; shift 2 ;;
	--max-threads) need "$@"; max_threads=$2; shift 2 ;;
	--symbol-dir) need "$@"; symdirs+=("$2"); shift 2 ;;
	--debuginfod) need "$@"; debuginfod=$2; shift 2 ;;
	--save-stream) need "$@"; save=$2; shift 2 ;;
	--svg) svg=1; shift ;;
	--allow-partial) partial=--allow-partial; shift ;;
	--collapsed) collapsed=1; shift ;;
	--json-windows) jsonwin=1; shift ;;
	--firefox-profile) need "$@"; firefox=$2; shift 2 ;;
	--max-timeline-samples) need "$@"; timeline=$2; shift 2 ;;
	--completion-budget) need "$@"; budget=$2; shift 2 ;;
	--otlp-endpoint | --otlp-header | --otlp-timeout | --otlp-compression | --otlp-ca)
		need "$@"; otlp_opts+=("--${1#--otlp-}" "$2"); shift 2 ;;
	--resource-attribute) need "$@"; otlp_opts+=("$1" "$2"); shift 2 ;;
	--otlp-timeline) otlp_opts+=(--timeline); shift ;;
	--input) need "$@"; input=$2; shift 2 ;;
	--module-cache) need "$@"; cache=$2; shift 2 ;;
	--max-module-cache) need "$@"; max_cache=$2; shift 2 ;;
	--debug-cache) need "$@"; debug_cache=$2; dcgiven=1; shift 2 ;;
	--max-debug-cache) need "$@"; max_debug_cache=$2; dcgiven=1; shift 2 ;;
	--format) need "$@"; format=$2; shift 2 ;;
	--event) need "$@"; event=$2; shift 2 ;;
	--kallsyms) need "$@"; kallsyms=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	--) shift; break ;;
	*) err "unknown option '$1'" ;;
	esac
done

case $cmd in
record)
	[ "$selectors" -eq 1 ] ||
		err "record needs exactly one target selector (--pid PID, --docker-container ID_OR_NAME, --k8s-pod NAMESPACE/NAME or --host)"
	[ -z "$k8s_container" ] || [ -n "$k8s_pod" ] || err "--container is only valid with --k8s-pod"
	[ $# -eq 0 ] || err "record takes no command; use launch -- COMMAND"
	[ -z "$input" ] || err "--input is only valid with replay and import" ;;
launch)
	[ "$selectors" -eq 0 ] || err "launch takes a command, not a target selector"
	[ -z "$k8s_container" ] || err "--container is only valid with --k8s-pod"
	[ $# -gt 0 ] || err "launch needs a command after --"
	[ -z "$input" ] || err "--input is only valid with replay and import" ;;
replay | import)
	[ "$selectors" -eq 0 ] || err "$cmd reads a file, not a target selector"
	[ -z "$k8s_container" ] || err "--container is only valid with --k8s-pod"
	[ $# -eq 0 ] || err "$cmd takes no command ('$1')"
	[ -n "$input" ] || err "$cmd needs --input FILE"
	[ -f "$input" ] || [ -p "$input" ] || [ "$input" = /dev/stdin ] ||
		err "--input '$input' is not a file"
	[ -r "$input" ] || err "cannot read '$input'"
	[ -z "$save" ] || err "--save-stream is only valid with record and launch"
	[ -z "$cpuid_set$require_hw" ] ||
		err "--cpuid and --require-hardware-pmu are only valid with record and launch" ;;
esac
[ "$cmd" = import ] || [ "$format$event$kallsyms" = "$RP_DEFAULT_FORMAT" ] ||
	err "--format, --event and --kallsyms are only valid with import"
[ -z "$kallsyms" ] || [ -r "$kallsyms" ] || err "cannot read --kallsyms '$kallsyms'"
case $format in
auto | perf-data | simpleperf) ;;
*) err "--format must be auto, perf-data or simpleperf, not '$format'" ;;
esac
case $firefox in
'' | json | jslb) ;;
*) err "--firefox-profile must be json or jslb, not '$firefox'" ;;
esac
case $timeline in
'' | *[!0-9]* | 0 | 0*) err "--max-timeline-samples must be a positive integer, not '$timeline'" ;;
esac
if [ "${#timeline}" -gt 8 ] || [ "$timeline" -gt 16777216 ]; then
	err "--max-timeline-samples may not exceed 16777216"
fi
for d in ${symdirs[@]+"${symdirs[@]}"}; do
	[ -n "$d" ] || err "--symbol-dir needs a directory, not ''"
	[ -d "$d" ] || err "--symbol-dir '$d' is not a directory"
done
[ -z "$cache" ] || [ -d "$cache" ] || err "--module-cache '$cache' is not a directory"
if [ -e "$output" ] && [ ! -d "$output" ]; then
	err "--output '$output' exists and is not a directory"
fi
stages=(collect unwind aggregate emit-pprof commit fanout)
[ -z "$svg" ] || stages+=(emit-svg)
[ -z "$collapsed" ] || stages+=(emit-collapsed)
[ -z "$jsonwin" ] || stages+=(emit-json)
[ -z "$firefox" ] || stages+=(emit-firefox)
[ "$cmd" != import ] || stages+=(import)
# The export is asked for by an --otlp option or an endpoint in the environment; otherwise
# emit-otlp (and its libraries) is never even loaded.
otlp_asked=
if [ ${#otlp_opts[@]} -gt 0 ] ||
	[ -n "${OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT:-}${OTEL_EXPORTER_OTLP_ENDPOINT:-}" ]; then
	otlp_asked=1 stages+=(emit-otlp)
fi
for s in "${stages[@]}"; do
	[ -x "$bin/$s" ] || err "stage '$s' not found in $bin (run make)"
done

# Stage options are checked before anything starts, so a bad value leaves no trace.  The
# window length has one owner: collect writes it in the stream (--window, else its default)
# and aggregate reads it there; only a replay or an import gives aggregate --window, which
# overrides the recorded length (an import records none).  The check sees --window all the
# same: the reorder window may not exceed it.
wopt=()
[ -z "$window" ] || wopt=(--window "$window")
aopts=(--event-reorder-window "$reorder" --max-stacks "$max_stacks" --max-pending-events "$max_pending")
# A value left at its default needs no check (each process start costs the run's start-up).
[ -z "$window" ] && [ "$reorder" = "$RP_DEFAULT_EVENT_REORDER_WINDOW" ] &&
	[ "$max_stacks" = "$RP_DEFAULT_MAX_STACKS" ] &&
	[ "$max_pending" = "$RP_DEFAULT_MAX_PENDING_EVENTS" ] ||
	"$bin/aggregate" --check ${wopt[@]+"${wopt[@]}"} "${aopts[@]}" || exit 1
case $cmd in replay | import) aopts=(${wopt[@]+"${wopt[@]}"} "${aopts[@]}") ;; esac
# import writes its events in time order already (as perf's ordered events do): aggregate
# has nothing to wait for, and passes each event on without holding it.
[ "$cmd" != import ] || [ -n "$reorder_given" ] || aopts+=(--event-reorder-window 0)
# With no reader of the timestamped events (emit-firefox, emit-otlp --timeline), aggregate
# writes the windows alone: the emitters and commit then read kilobytes, not the stream.
case " ${otlp_opts[*]-} " in
*" --timeline "*) ;;
*) [ -n "$firefox" ] || aopts+=(--windows-only) ;;
esac
fopts=(--completion-budget "$budget")
[ "$budget" = "$RP_DEFAULT_COMPLETION_BUDGET" ] || "$bin/fanout" --check "${fopts[@]}" || exit 1
[ "$keep" = "$RP_DEFAULT_KEEP_WINDOWS" ] || "$bin/commit" --check --keep-windows "$keep" || exit 1
# The host has no target for the heap probes: its default is the cpu profile alone.
[ -z "$host" ] || [ -n "$profiles_given" ] || profiles=cpu
copts=(--duration "$duration" ${wopt[@]+"${wopt[@]}"} --cpu-frequency "$freq" --unwind "$unwind"
	--profiles "$profiles")
[ -z "$max_threads" ] || copts+=(--max-threads "$max_threads")
[ -z "$cpuid_set" ] || copts+=(--cpuid "$cpuid")
[ -z "$require_hw" ] || copts+=(--require-hardware-pmu)
[ -z "$max_cache" ] || copts+=(--max-module-cache "$max_cache")
[ -z "$partial" ] || copts+=(--allow-partial)
copts+=(${profile_opts[@]+"${profile_opts[@]}"})
# The target of record: a process, or a container (collect resolves it through its API).
if [ -n "$docker" ]; then
	topts=(--docker-container "$docker")
elif [ -n "$host" ]; then
	topts=(--host)
elif [ -n "$k8s_pod" ]; then
	topts=(--k8s-pod "$k8s_pod")
	[ -z "$k8s_container" ] || topts+=(--container "$k8s_container")
else
	topts=(--kind pid --pid "$pid")
fi
# collect checks its options and, for record, runs the preflight before anything starts.
# It also tells the kernel's Landlock ABI, which decides the stages' user below.
abi=
case $cmd in
record) abi=$("$bin/collect" --check --landlock-abi "${copts[@]}" "${topts[@]}") || exit 1 ;;
launch) abi=$("$bin/collect" --check --landlock-abi "${copts[@]}" --launch) || exit 1 ;;
esac

# ---- who the stages after collect run as ----
# Behind sudo, the caller; otherwise the owner of the output directory (root, when the run
# creates it).  An owner of uid 0 keeps uid 0 without any capability, and only Landlock
# (applied by each stage to itself) keeps such a stage out of the rest of the file system:
# without Landlock, nobody instead.
# The effective ids, as id -u and id -g print them.
uid=$EUID egid=
while read -r k _ e _; do [ "$k" != Gid: ] || { egid=$e; break; }; done </proc/self/status
[ -n "$egid" ] || egid=$(id -g)
if [ "$uid" -ne 0 ]; then
	case $cmd in replay | import) ;;
	*) err "$cmd must run as root (perf events of another process)" ;; esac
fi
runas=() drop=()
ruid=$uid rgid=$egid
if [ "$uid" -eq 0 ]; then
	if [ -n "${SUDO_UID:-}" ] && [ "$SUDO_UID" != 0 ]; then
		ruid=$SUDO_UID rgid=${SUDO_GID:-$SUDO_UID}
	elif [ -e "$output" ]; then
		# Owned by root (the test needs no process): no stat.
		owner='0 0'
		[ -O "$output" ] && [ -G "$output" ] || owner=$(stat -c '%u %g' -- "$output")
		ruid=${owner% *} rgid=${owner#* }
	else
		ruid=0 rgid=0
	fi
	# replay and import ask commit (collect --check told record and launch, above).
	if [ "$ruid" -eq 0 ] && [ -z "$abi" ]; then
		abi=$("$bin/commit" --landlock-abi 2>/dev/null) || abi=0
	fi
	case $abi in '' | *[!0-9]*) abi=0 ;; esac
	if [ "$ruid" -eq 0 ] && [ "$abi" -eq 0 ]; then
		ruid=$(id -u nobody) rgid=$(id -g nobody)
	fi
	# Each stage after collect becomes that user itself (lib/runas.h), its first act: one
	# process start per stage, not setpriv's two.  Only tee (--save-stream) needs setpriv.
	runas=(--run-as "$ruid:$rgid")
	drop=(setpriv --reuid="$ruid" --regid="$rgid" --clear-groups --inh-caps=-all
		--bounding-set=-all --no-new-privs --)
fi
# commit, once the directory exists, confines itself as in the run and asks whether the
# directory may be written: the check sees what the run will.
check_output() {
	"$bin/commit" ${runas[@]+"${runas[@]}"} --check --output "$output" --keep-windows "$keep"
}
# A directory that is not there yet is checked once made (below).
[ ! -e "$output" ] || check_output || exit 1
# The symbol directories must be there for the stages' user (Landlock opens them).
symargs=()
for d in ${symdirs[@]+"${symdirs[@]}"}; do symargs+=(--symbol-dir "$d"); done
[ -z "$debuginfod" ] || symargs+=(--debuginfod "$debuginfod")
# The debug cache (docs/debug-cache.md) belongs to the user the stages run as: for the
# caller, XDG_CACHE_HOME or ~/.cache; for another user (behind sudo, or the owner of the
# output), that user's ~/.cache; none for a user without a home (nobody).
if [ -z "$debug_cache" ]; then
	if [ "$ruid" = "$uid" ]; then
		dchome=${HOME:-}
		[ -z "${XDG_CACHE_HOME:-}" ] || debug_cache=$XDG_CACHE_HOME/rustprofile/debug
	else
		dchome=$(getent passwd "$ruid" | cut -d: -f6) || dchome=''
	fi
	if [ -z "$debug_cache" ] && [ -n "$dchome" ] && [ "$dchome" != / ] && [ -d "$dchome" ]; then
		debug_cache=$dchome/.cache/rustprofile/debug
	fi
	[ -n "$debug_cache" ] || debug_cache=none
fi
dcargs=()
[ "$debug_cache" = none ] || dcargs+=(--debug-cache "$debug_cache")
[ -z "$max_debug_cache" ] || dcargs+=(--max-debug-cache "$max_debug_cache")
if [ ${#symargs[@]} -ne 0 ] || [ -n "$dcgiven" ]; then
	"$bin/unwind" ${runas[@]+"${runas[@]}"} --check ${symargs[@]+"${symargs[@]}"} \
		${dcargs[@]+"${dcargs[@]}"} || exit 1
fi
# The OTLP export's settings, from the options and OTEL_* (emit-otlp resolves them, as the
# stage's user: an --otlp-ca it cannot read fails here).  No endpoint anywhere: no export.
otlp=
if [ -n "$otlp_asked" ]; then
	otlp=$("$bin/emit-otlp" ${runas[@]+"${runas[@]}"} --check ${otlp_opts[@]+"${otlp_opts[@]}"}) ||
		exit 1
	[ "$otlp" = enabled ] || otlp=
fi
if [ ! -e "$output" ]; then
	# The topmost directory created, so that the whole new tree can be given away.
	created=$output
	while parent_of "$created" && [ ! -e "$parent" ]; do created=$parent; done
	# A recording's module cache (below) is made with it: one process for both.
	new=(-- "$output")
	case $cmd in record | launch) new=(-m 0755 -- "$output/.modules") ;; esac
	mkdir -p "${new[@]}" 2>/dev/null || err "cannot create output directory '$output'"
	[ "$uid" -ne 0 ] || [ "$ruid:$rgid" = "$uid:$egid" ] || chown -R -- "$ruid:$rgid" "$created"
	# A directory the stages cannot use is not left behind.
	check_output || { rm -rf -- "$created"; exit 1; }
fi

# ---- wiring ----
# mkdir fails on any name that exists (a symbolic link too); 32 random bits keep it unguessed.
work=${TMPDIR:-/tmp}/rustprofile.$$.$SRANDOM
mkdir -m 711 -- "$work" || err "cannot create a work directory in '${TMPDIR:-/tmp}'"
declare -A spid=() sname=() rc=() ended=() echoed=()
order=()
# shellcheck disable=SC2317 # called by the trap
cleanup() {
	# A stopped stage (SIGSTOP) only acts on SIGTERM once continued.
	for p in "${!sname[@]}"; do
		[ -z "${rc[${sname[$p]}]+x}" ] || continue
		if kill "$p" 2>/dev/null; then kill -CONT "$p" 2>/dev/null || true; fi
	done
	rm -rf -- "$work"
}
trap cleanup EXIT
mkfifo "$work/s0" "$work/s1" "$work/s2" "$work/s3" "$work/s4" "$work/s5" "$work/s6" "$work/s7" \
	"$work/s8" "$work/s9" "$work/s10"
[ "$ruid:$rgid" = "$uid:$egid" ] || chown "$ruid:$rgid" "$work"/s*

# start NAME IN OUT CMD...: runs a stage in the background reading IN and writing OUT
# ("-" keeps the driver's) with its stderr in a file of its own, and remembers its pid.  The
# redirections happen in the background child: opening a FIFO blocks until its other end is
# opened.
start() {
	local name=$1 in=$2 out=$3 errf=$work/err.$1
	shift 3
	if [ "$in" = - ] && [ "$out" = - ]; then
		"$@" 2>"$errf" &
	elif [ "$in" = - ]; then
		"$@" >"$out" 2>"$errf" &
	elif [ "$out" = - ]; then
		"$@" <"$in" 2>"$errf" &
	else
		"$@" <"$in" >"$out" 2>"$errf" &
	fi
	spid[$name]=$!
	sname[$!]=$name
	order+=("$name")
}

if [ "$cmd" = replay ]; then
	[ -n "$cache" ] || cache=$(dirname -- "$input")/.modules
	src=$input
elif [ "$cmd" = import ]; then
	cache=${cache:-$output/.modules}
	eopt=()
	[ -z "$event" ] || eopt+=(--event "$event")
	[ -z "$kallsyms" ] || eopt+=(--kallsyms "$kallsyms")
	# The capture comes on stdin (opened here, as whoever runs the driver); messages name
	# it.  /proc/kallsyms shows its addresses to the opener: the stage gets the driver's.
	if [ -r /proc/kallsyms ] && exec 6</proc/kallsyms; then
		eopt+=(--proc-kallsyms-fd 6)
	fi 2>/dev/null
	start import "$input" "$work/s1" "$bin/import" ${runas[@]+"${runas[@]}"} --input - \
		--input-name "$input" --format "$format" ${eopt[@]+"${eopt[@]}"}
	exec 6<&-
	src=$work/s1
else
	cache=$output/.modules
	copts+=(--module-cache "$cache")
	# Made before unwind starts: it may read only what exists when it confines itself, and
	# it reads the JIT symbol files collect copies there (docs/jit.md).
	if [ ! -e "$cache" ] && mkdir -m 0755 -- "$cache" 2>/dev/null; then
		owner=0:0
		[ -O "$output" ] && [ -G "$output" ] || owner=$(stat -c %u:%g -- "$output")
		[ "$uid" -ne 0 ] || [ "$owner" = "$uid:$egid" ] || chown -- "$owner" "$cache"
	fi
	first=$work/s1 src=$work/s1
	[ -z "$save" ] || first=$work/s0
	if [ "$cmd" = record ]; then
		start collect - "$first" "$bin/collect" "${copts[@]}" "${topts[@]}"
	else
		# The command keeps the driver's stdout and stderr through fds 3 and 4; collect's
		# go to the pipe and its own file.
		exec 3>&1 4>&2
		start collect - "$first" "$bin/collect" "${copts[@]}" --kind launch \
			--launch-stdout-fd 3 --launch-stderr-fd 4 --launch -- "$@"
		exec 3>&- 4>&-
	fi
	if [ -n "$save" ]; then
		# Created here so that a directory only root can write to still works.
		[ ${#drop[@]} -eq 0 ] || command -v setpriv >/dev/null ||
			err "setpriv (util-linux) is needed to drop privileges"
		: >"$save" || err "cannot create '$save'"
		[ "$uid" -ne 0 ] || chown -- "$ruid:$rgid" "$save"
		start save-stream "$work/s0" "$work/s1" ${drop[@]+"${drop[@]}"} tee -- "$save"
	fi
fi
# An import keeps the leaf of a DWARF-mode sample whose module this machine lacks, as perf
# report does without the binary.
[ "$cmd" != import ] || partial=--allow-partial
start unwind "$src" "$work/s2" "$bin/unwind" ${runas[@]+"${runas[@]}"} --module-cache "$cache" \
	${symargs[@]+"${symargs[@]}"} ${dcargs[@]+"${dcargs[@]}"} $partial
start aggregate "$work/s2" "$work/s3" "$bin/aggregate" ${runas[@]+"${runas[@]}"} "${aopts[@]}"
# Emitters pass the stream on.  Live, the derived ones (SVG, Firefox) hang off fanout,
# which never waits for them: a window that ends while one is still writing the previous
# window goes without that output (output_backpressure in diagnostics).  replay and import
# have no live source to protect, so every emitter sits in the main path and none sheds.
live=
case $cmd in record | launch) [ -z "$svg$firefox" ] || live=1 ;; esac
start_svg() {
	start emit-svg "$1" "$2" "$bin/emit-svg" ${runas[@]+"${runas[@]}"} --output "$output"
}
start_firefox() {
	start emit-firefox "$1" "$2" "$bin/emit-firefox" ${runas[@]+"${runas[@]}"} \
		--output "$output" --format "$firefox" --max-timeline-samples "$timeline"
}
next=$work/s3
if [ -n "$collapsed" ]; then
	start emit-collapsed "$next" "$work/s6" "$bin/emit-collapsed" ${runas[@]+"${runas[@]}"} \
		--output "$output"
	next=$work/s6
fi
# The JSON windows sit in the main path like the collapsed stacks: their heap deltas
# need every window, which a shed window would break, and writing them is as cheap.
if [ -n "$jsonwin" ]; then
	start emit-json "$next" "$work/s10" "$bin/emit-json" ${runas[@]+"${runas[@]}"} \
		--output "$output"
	next=$work/s10
fi
if [ -z "$live" ] && [ -n "$svg" ]; then
	start_svg "$next" "$work/s5"
	next=$work/s5
fi
if [ -z "$live" ] && [ -n "$firefox" ]; then
	start_firefox "$next" "$work/s7"
	next=$work/s7
fi
# The OTLP export goes after emit-pprof, on a thread of its own: a slow receiver holds up
# nothing (docs/otlp.md); its results reach commit later in the stream.
if [ -n "$otlp" ]; then
	start emit-pprof "$next" "$work/s9" "$bin/emit-pprof" ${runas[@]+"${runas[@]}"} \
		--output "$output"
	start emit-otlp "$work/s9" "$work/s4" "$bin/emit-otlp" ${runas[@]+"${runas[@]}"} \
		--output "$output" --max-timeline-samples "$timeline" ${otlp_opts[@]+"${otlp_opts[@]}"}
else
	start emit-pprof "$next" "$work/s4" "$bin/emit-pprof" ${runas[@]+"${runas[@]}"} \
		--output "$output"
fi
next=$work/s4
branches=()
if [ -n "$live" ]; then
	mkfifo "$work/svg.in" "$work/svg.out" "$work/ff.in" "$work/ff.out"
	[ "$ruid:$rgid" = "$uid:$egid" ] || chown "$ruid:$rgid" "$work"/*.in "$work"/*.out
	if [ -n "$svg" ]; then
		start_svg "$work/svg.in" "$work/svg.out"
		branches+=(emit-svg)
		fopts+=(--branch "emit-svg=$work/svg.in,$work/svg.out")
	fi
	if [ -n "$firefox" ]; then
		start_firefox "$work/ff.in" "$work/ff.out"
		branches+=(emit-firefox)
		fopts+=(--branch "emit-firefox=$work/ff.in,$work/ff.out")
	fi
	start fanout "$work/s4" "$work/s8" "$bin/fanout" ${runas[@]+"${runas[@]}"} "${fopts[@]}"
	next=$work/s8
fi
# commit tells the session id through fd 5, so that the driver can remove the session's
# temporary files should commit be killed before it does.
exec 5>"$work/session"
start commit "$next" - "$bin/commit" ${runas[@]+"${runas[@]}"} --output "$output" \
	--keep-windows "$keep" --session-fd 5
exec 5>&-

# end_branches: the derived emitters behind fanout end (a stopped one once continued);
# fanout has published without their files what they had not written.
end_branches() {
	local b p
	for b in ${branches[@]+"${branches[@]}"}; do
		p=${spid[$b]}
		[ -z "${rc[$b]+x}" ] || continue
		if kill -TERM "$p" 2>/dev/null; then kill -CONT "$p" 2>/dev/null || true; fi
		ended[$b]=1
	done
}

# SIGINT/SIGTERM: collect publishes the current window and stops; the rest drain.  Once
# collect has gone (a second signal, or a run that had ended by itself), fanout is told to
# stop waiting for a derived emitter that is behind (stopped, or stuck): the windows it
# holds are published at once without that emitter's files.  Without a signal, fanout
# stops waiting by itself once the completion budget has passed.
stops=0
# shellcheck disable=SC2317 # called by the trap
stop() {
	stops=$((stops + 1))
	if [ -n "${spid[collect]:-}" ] && [ "$stops" -eq 1 ] && [ -z "${rc[collect]+x}" ]; then
		kill -TERM "${spid[collect]}" 2>/dev/null || true
	elif [ -n "${spid[fanout]:-}" ] && [ -z "${rc[fanout]+x}" ]; then
		kill -TERM "${spid[fanout]}" 2>/dev/null || true
		end_branches
	fi
	# An abnormal teardown of the export (a second signal, or one after collect has gone;
	# replay and import have none): its retries stop, what it holds fails.
	if [ "$stops" -gt 1 ] || [ -z "${spid[collect]:-}" ] || [ -n "${rc[collect]+x}" ]; then
		[ -z "${spid[emit-otlp]:-}" ] || [ -n "${rc[emit-otlp]+x}" ] ||
			kill -TERM "${spid[emit-otlp]}" 2>/dev/null || true
	fi
}
trap stop INT TERM

# Every stage's exit status, as each ends.  When fanout ends, the emitters behind it are
# done with or left behind.
# ended_stage PID STATUS: records that the stage PID ended with STATUS.
ended_stage() {
	local name=${sname[$1]} p rest=()
	rc[$name]=$2
	for p in "${left[@]}"; do [ "$p" = "$1" ] || rest+=("$p"); done
	left=(${rest[@]+"${rest[@]}"})
	[ "$name" != fanout ] || end_branches
	# A stage that failed for a reason of its own fails the run: collect stops now rather
	# than when a write of its finds the pipeline broken, which a quiet target delays.
	case $2 in
	0 | 3 | 4 | 5 | 141) ;;
	*)
		if [ -z "${ended[$name]:-}" ] && [ -n "${spid[collect]:-}" ] &&
			[ -z "${rc[collect]+x}" ]; then
			kill -TERM "${spid[collect]}" 2>/dev/null || true
			# Whatever collect says now (stopped in its calibration, say) echoes this.
			echoed[collect]=1
		fi ;;
	esac
}
left=("${!sname[@]}")
# The shell's own notices of stages that died of a signal ("Killed") would be a second line:
# the loop's stderr is /dev/null, and the reasons are told below.
while [ ${#left[@]} -gt 0 ]; do
	done_pid=
	set +e
	wait -n -p done_pid "${left[@]}" 2>/dev/null
	s=$?
	set -e
	if [ -n "${done_pid:-}" ]; then
		ended_stage "$done_pid" "$s"
		continue
	fi
	# Interrupted by a trapped signal (status above 128), or the shell had already
	# reaped and set aside a stage wait -n no longer sees (127): plain wait PID still
	# gives the status of each stage that is gone.
	found=
	for p in "${left[@]}"; do
		kill -0 "$p" 2>/dev/null && continue
		set +e
		wait "$p" 2>/dev/null
		s=$?
		set -e
		ended_stage "$p" "$s"
		found=1
	done
	[ -n "$found" ] || [ "$s" -ne 127 ] || sleep 0.1
done 2>/dev/null

# The cause of a failure is the first stage, in pipeline order, that failed for a reason of
# its own.  Status 3 (collect's reader stopped), SIGPIPE (141) and 4 (the input ended early)
# only echo another stage's failure; a derived emitter the driver ended did as told; fanout's
# 5 says it published windows without some derived files.
failed='' status=0 partial_run=
for name in "${order[@]}"; do
	s=${rc[$name]}
	if [ -n "${ended[$name]:-}" ] && { [ "$s" -eq 143 ] || [ "$s" -eq 0 ]; }; then
		rc[$name]=0 s=0
	fi
	[ "$name" != fanout ] || [ "$s" -ne 5 ] || { partial_run=1 rc[$name]=0 s=0; }
	[ -z "${echoed[$name]:-}" ] || [ "$s" -eq 0 ] || continue
	case $s in 0 | 3 | 4 | 141) ;; *) [ -n "$failed" ] || failed=$name status=$s ;; esac
done
if [ -z "$failed" ]; then
	# Only echoes: the first of them in pipeline order (a truncated input file, say).
	for name in "${order[@]}"; do
		[ "${rc[$name]}" -eq 0 ] || { failed=$name status=${rc[$name]}; break; }
	done
fi
# A failed run's stages may have left temporary files after commit's own sweep (an emitter
# that finished a window no stage would publish any more), or commit was killed before it:
# the session's temporaries go.
if { [ -n "$failed" ] || [ "${rc[commit]}" -ne 0 ]; } && [ -s "$work/session" ]; then
	"$bin/commit" ${runas[@]+"${runas[@]}"} --output "$output" \
		--sweep "$(head -c 16 "$work/session")" 2>/dev/null || true
fi

# Warnings of the stages that succeeded, and the reason of the one that failed.  A stage the
# driver ended has nothing to tell: what it said echoes the stage it was ended for.
for name in "${order[@]}"; do
	[ -s "$work/err.$name" ] || continue
	[ -z "${ended[$name]:-}" ] || [ "$name" = "$failed" ] || continue
	if [ "${rc[$name]}" -eq 0 ] || [ "$name" = "$failed" ]; then
		cat -- "$work/err.$name" >&2
	fi
done
if [ -z "$failed" ]; then
	[ -z "$partial_run" ] || exit 3
	exit 0
fi
# A stage that failed said why on its own line; one killed by a signal could not.
[ "$status" -le 128 ] || err "stage $failed was killed by signal $((status - 128))"
[ -s "$work/err.$failed" ] || err "stage $failed failed with exit status $status"
exit 1
