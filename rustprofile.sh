#!/bin/sh
# rustprofile: wires the profiler's stages into a pipeline for each subcommand.
#
# USAGE
#   rustprofile.sh record --pid PID [OPTIONS]
#   rustprofile.sh launch [OPTIONS] -- COMMAND [ARGS...]
#   rustprofile.sh replay --input STREAM [OPTIONS]
#   rustprofile.sh import --input CAPTURE [--format auto|perf-data|simpleperf] [OPTIONS]
#
# record/launch run, as root:
#   collect ──▶ [tee FILE] ──▶ unwind ──▶ aggregate ──▶ emit-pprof ──▶ commit ──▶ "wrote PATH"
# with every stage after collect started as an unprivileged user (the sudo caller, else
# nobody) with no capabilities and no-new-privs.  replay feeds a saved stream to unwind;
# import turns a perf.data or simpleperf capture into the same stream (import stage first).
# The same pipeline can be typed by hand; see README.md.
#
# EXAMPLE
#   sudo ./rustprofile.sh record --pid 1234 --duration 10s --window 2s --output ./profiles
#   wrote ./profiles/cpu-5f0c…-000000-1732870000000000000.pb.gz
#   wrote ./profiles/diagnostics-5f0c…-000000-1732870000000000000.json
set -eu

prog=rustprofile
# Installed, PREFIX/bin/rustprofile is a link to PREFIX/libexec/rustprofile/rustprofile.sh.
self=$(readlink -f "$0" 2>/dev/null || echo "$0")
here=$(cd "$(dirname "$self")" && pwd)
if [ -n "${RP_BIN:-}" ]; then
	bin=$RP_BIN
elif [ -f "$here/collect" ] && [ -x "$here/collect" ]; then
	bin=$here
else
	bin=$here/.output/bin
fi

usage() {
	cat <<EOF
usage: $prog record --pid PID [OPTIONS]
       $prog launch [OPTIONS] -- COMMAND [ARGS...]
       $prog replay --input STREAM [--module-cache DIR] [OPTIONS]
       $prog import --input CAPTURE [--format FORMAT] [--event NAME] [OPTIONS]

Options (defaults in brackets):
  --pid PID                      process to profile (record)
  --duration DURATION            how long to record; 0 = until exit or signal [60s]
  --window DURATION              window length, > 0 [60s]
  --output DIR                   where windows are published [.]
  --profiles LIST                cpu and/or off-cpu (heap is not available in this build) [cpu]
  --offcpu-phase PHASE           off-cpu: blocked, runqueue or all [blocked]
  --offcpu-min-duration-us N     off-cpu: ignore intervals shorter than N microseconds [0]
  --offcpu-ring-buffer BYTES     off-cpu: BPF ring buffer, a power of two [4194304]
  --offcpu-btf FILE              off-cpu: kernel BTF, for a kernel without it built in
  --offcpu-probability P         off-cpu: record P% of the switch-outs at random, weighed
                                 100/P: less overhead, estimated values [100]
  --unwind MODE                  auto, fp or dwarf; auto calibrates frame pointers for up to
                                 10 s / 64 samples and falls back to DWARF; off-cpu
                                 alone has no calibration [auto]
  --allow-partial                without unwind tables, keep leaf-only stacks; launch
                                 without a cgroup v2: only the command's own pid
  --cpu-frequency HZ             samples per second, 1..999 [49]
  --keep-windows N               windows kept from this session, > 0 [60]
  --max-stacks N                 distinct stacks per window [65536]
  --max-pending-events N         reorder buffer bound [262144]
  --event-reorder-window DUR     tolerated timestamp skew, <= window [100ms]
  --symbol-dir DIR               extra debug-file directory (repeatable)
  --svg                          also write a static SVG flame graph per window
  --collapsed                    also write folded stacks (FlameGraph format) per window
  --firefox-profile FORMAT       also write a Firefox Profiler profile per window: json or jslb
  --max-timeline-samples N       timestamped samples kept per Firefox window [65536]
  --save-stream FILE             also keep collect's event stream in FILE (record, launch)
  --input FILE                   saved stream (replay) or perf.data/simpleperf capture (import)
  --format FORMAT                auto, perf-data or simpleperf (import) [auto]
  --event NAME                   the capture's sampling event to import (import)
  --module-cache DIR             module copies for replay [<input dir>/.modules]
  -h, --help                     this text
Durations: 500ms, 10s, 2m, 1h30m.  See README.md and the manual for details.
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
record | launch | replay | import) ;;
-h | --help | help) usage; exit 0 ;;
*) err "unknown command '$cmd' (expected record, launch, replay or import)" ;;
esac

format=auto event='' pid='' duration=60s window=60s output=. profiles=cpu unwind=auto freq=49 keep=60
max_stacks=65536 max_pending=262144 reorder=100ms save='' input='' cache='' max_threads=''
selectors=0 partial='' svg='' collapsed='' firefox='' timeline=65536
symdirs='' offcpu_opts=''
need() { [ $# -ge 2 ] || err "option '$1' needs a value"; }
while [ $# -gt 0 ]; do
	case $1 in
	--pid) need "$@"; pid=$2; selectors=$((selectors + 1)); shift 2 ;;
	--docker-container | --k8s-pod)
		err "target selector '$1' is not available in this build" ;;
	--container) err "--container is only valid with --k8s-pod" ;;
	--duration) need "$@"; duration=$2; shift 2 ;;
	--window) need "$@"; window=$2; shift 2 ;;
	--output) need "$@"; output=$2; shift 2 ;;
	--profiles) need "$@"; profiles=$2; shift 2 ;;
	--offcpu-phase | --offcpu-min-duration-us | --offcpu-ring-buffer | --offcpu-btf | \
	--offcpu-probability)
		need "$@"; offcpu_opts="$offcpu_opts $1 $2"; shift 2 ;;
	--unwind) need "$@"; unwind=$2; shift 2 ;;
	--cpu-frequency) need "$@"; freq=$2; shift 2 ;;
	--keep-windows) need "$@"; keep=$2; shift 2 ;;
	--max-stacks) need "$@"; max_stacks=$2; shift 2 ;;
	--max-pending-events) need "$@"; max_pending=$2; shift 2 ;;
	--event-reorder-window) need "$@"; reorder=$2; shift 2 ;;
	--max-threads) need "$@"; max_threads=$2; shift 2 ;;
	--symbol-dir) need "$@"; symdirs="$symdirs
$2"; shift 2 ;;
	--save-stream) need "$@"; save=$2; shift 2 ;;
	--svg) svg=1; shift ;;
	--allow-partial) partial=--allow-partial; shift ;;
	--collapsed) collapsed=1; shift ;;
	--firefox-profile) need "$@"; firefox=$2; shift 2 ;;
	--max-timeline-samples) need "$@"; timeline=$2; shift 2 ;;
	--input) need "$@"; input=$2; shift 2 ;;
	--module-cache) need "$@"; cache=$2; shift 2 ;;
	--format) need "$@"; format=$2; shift 2 ;;
	--event) need "$@"; event=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	--) shift; break ;;
	*) err "unknown option '$1'" ;;
	esac
done

case $cmd in
record)
	[ "$selectors" -eq 1 ] || err "record needs exactly one target selector (--pid PID)"
	[ $# -eq 0 ] || err "record takes no command; use launch -- COMMAND"
	[ -z "$input" ] || err "--input is only valid with replay" ;;
launch)
	[ "$selectors" -eq 0 ] || err "launch takes a command, not --pid"
	[ $# -gt 0 ] || err "launch needs a command after --"
	[ -z "$input" ] || err "--input is only valid with replay" ;;
replay | import)
	[ "$selectors" -eq 0 ] || err "$cmd reads a file, not --pid"
	[ -n "$input" ] || err "$cmd needs --input FILE"
	[ -r "$input" ] || err "cannot read '$input'"
	[ -z "$save" ] || err "--save-stream is only valid with record and launch" ;;
esac
[ "$cmd" = import ] || [ "$format$event" = auto ] || err "--format and --event are only valid with import"
case $format in
auto | perf-data | simpleperf) ;;
*) err "--format must be auto, perf-data or simpleperf, not '$format'" ;;
esac
case $firefox in
'' | json | jslb) ;;
*) err "--firefox-profile must be json or jslb, not '$firefox'" ;;
esac
for s in collect unwind aggregate emit-pprof commit fanout ${svg:+emit-svg} \
	${collapsed:+emit-collapsed} ${firefox:+emit-firefox}; do
	[ -x "$bin/$s" ] || err "stage '$s' not found in $bin (run make)"
done

# Stage options are checked before anything starts, so a bad value leaves no trace.
"$bin/aggregate" --check --window "$window" --event-reorder-window "$reorder" \
	--max-stacks "$max_stacks" --max-pending-events "$max_pending" ||
	exit 1
"$bin/commit" --check --output "$output" --keep-windows "$keep" || exit 1
case $timeline in
'' | *[!0-9]* | 0 | 0*) err "--max-timeline-samples must be a positive integer, not '$timeline'" ;;
esac
[ "${#timeline}" -le 8 ] && [ "$timeline" -le 16777216 ] ||
	err "--max-timeline-samples may not exceed 16777216"
copts="--duration $duration --window $window --cpu-frequency $freq --unwind $unwind --profiles $profiles"
copts="$copts ${max_threads:+--max-threads $max_threads} $partial$offcpu_opts"
# collect checks its options and, for record, runs the preflight before anything starts.
# shellcheck disable=SC2086 # copts is a list of options, split on purpose
case $cmd in
record) "$bin/collect" --check $copts --pid "$pid" || exit 1 ;;
launch) "$bin/collect" --check $copts --launch || exit 1 ;;
esac

# ---- the unprivileged user for every stage after collect ----
uid=$(id -u)
if [ "$uid" -eq 0 ]; then
	if [ -n "${SUDO_UID:-}" ] && [ "${SUDO_UID}" != 0 ]; then
		ruid=$SUDO_UID rgid=${SUDO_GID:-$SUDO_UID}
	else
		ruid=$(id -u nobody) rgid=$(id -g nobody)
	fi
	command -v setpriv >/dev/null || err "setpriv (util-linux) is needed to drop privileges"
	# A command prefix, not a function: the stage must be the driver's direct child.
	drop="setpriv --reuid=$ruid --regid=$rgid --clear-groups --inh-caps=-all"
	drop="$drop --bounding-set=-all --no-new-privs --"
else
	case $cmd in replay | import) ;;
	*) err "$cmd must run as root (perf events of another process)" ;; esac
	ruid=$uid rgid=$(id -g) drop=
fi

if [ ! -d "$output" ]; then
	mkdir -p "$output" || err "cannot create output directory '$output'"
	[ "$uid" -ne 0 ] || chown "$ruid:$rgid" "$output"
fi
$drop test -w "$output" -a -x "$output" ||
	err "output directory '$output' is not writable by uid $ruid (the unprivileged stages)"

# ---- wiring ----
work=$(mktemp -d "${TMPDIR:-/tmp}/rustprofile.XXXXXX")
chmod 711 "$work"
pids=
cleanup() {
	# A stopped stage (SIGSTOP) only acts on SIGTERM once continued.
	for p in $pids; do kill "$p" 2>/dev/null && kill -CONT "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT
mkfifo "$work/s0" "$work/s1" "$work/s2" "$work/s3" "$work/s4" "$work/s5" "$work/s6" "$work/s7" \
	"$work/s8"
chown "$ruid:$rgid" "$work"/s*

# start NAME IN OUT CMD...: runs a stage in the background reading IN and writing OUT
# ("-" keeps the driver's) and remembers its pid under NAME.  The redirections happen in the
# background child: opening a FIFO blocks until its other end is opened.  The first stage
# writes to the driver's stderr; the others to a file each, shown at the end, so that when
# a stage fails the user reads its reason and not the complaints of the stages after it.
start() {
	name=$1 in=$2 out=$3 err=$work/err.$1
	shift 3
	[ -n "${names:-}" ] || err=/dev/stderr
	if [ "$in" = - ] && [ "$out" = - ]; then
		"$@" 2>"$err" &
	elif [ "$in" = - ]; then
		"$@" >"$out" 2>"$err" &
	elif [ "$out" = - ]; then
		"$@" <"$in" 2>"$err" &
	else
		"$@" <"$in" >"$out" 2>"$err" &
	fi
	# pid_NAME with "-" as "_", by parameter expansion: no subshell per stage.
	v=$name
	while :; do
		case $v in *-*) v=${v%%-*}_${v#*-} ;; *) break ;; esac
	done
	eval "pid_$v=\$!"
	pids="$pids $!"
	names="${names:-} $name:$!"
}

symargs=
set_symargs() {
	old_ifs=$IFS
	IFS='
'
	for d in $symdirs; do symargs="$symargs --symbol-dir=$d"; done
	IFS=$old_ifs
}
set_symargs

if [ "$cmd" = replay ]; then
	[ -n "$cache" ] || cache=$(dirname "$input")/.modules
	src=$input
elif [ "$cmd" = import ]; then
	cache=${cache:-$output/.modules}
	# shellcheck disable=SC2086
	start import "$input" "$work/s1" $drop "$bin/import" --input - --format "$format" \
		${event:+--event "$event"}
	src=$work/s1
else
	cache=$output/.modules
	copts="$copts --module-cache $cache"
	first=$work/s1 src=$work/s1
	[ -z "$save" ] || first=$work/s0
	if [ "$cmd" = record ]; then
		# shellcheck disable=SC2086
		start collect - "$first" "$bin/collect" $copts --kind pid --pid "$pid"
	else
		# The command keeps the driver's stdout through fd 3; collect's goes to the pipe.
		exec 3>&1
		# shellcheck disable=SC2086
		start collect - "$first" "$bin/collect" $copts --kind launch \
			--launch-stdout-fd 3 --launch -- "$@"
		exec 3>&-
	fi
	if [ -n "$save" ]; then
		# Created here so that a directory only root can write to still works.
		: >"$save" || err "cannot create '$save'"
		[ "$uid" -ne 0 ] || chown "$ruid:$rgid" "$save"
		# shellcheck disable=SC2086
		start save-stream "$work/s0" "$work/s1" $drop tee "$save"
	fi
fi
# shellcheck disable=SC2086
start unwind "$src" "$work/s2" $drop "$bin/unwind" --module-cache "$cache" $symargs $partial
start aggregate "$work/s2" "$work/s3" $drop "$bin/aggregate" --window "$window" \
	--event-reorder-window "$reorder" --max-stacks "$max_stacks" \
	--max-pending-events "$max_pending"
# Emitters pass the stream on.  Live, the derived ones (SVG, Firefox) hang off fanout,
# which never waits for them: a window that ends while one is still writing the previous
# window goes without that output (output_backpressure in diagnostics).  replay and import
# have no live source to protect, so every emitter sits in the main path and none sheds.
live=
case $cmd in record | launch) [ -z "$svg$firefox" ] || live=1 ;; esac
start_svg() {
	start emit-svg "$1" "$2" $drop "$bin/emit-svg" --output "$output"
}
start_firefox() {
	start emit-firefox "$1" "$2" $drop "$bin/emit-firefox" --output "$output" \
		--format "$firefox" --max-timeline-samples "$timeline"
}
next=$work/s3
if [ -n "$collapsed" ]; then
	start emit-collapsed "$next" "$work/s6" $drop "$bin/emit-collapsed" --output "$output"
	next=$work/s6
fi
if [ -z "$live" ] && [ -n "$svg" ]; then
	start_svg "$next" "$work/s5"
	next=$work/s5
fi
if [ -z "$live" ] && [ -n "$firefox" ]; then
	start_firefox "$next" "$work/s7"
	next=$work/s7
fi
start emit-pprof "$next" "$work/s4" $drop "$bin/emit-pprof" --output "$output"
next=$work/s4
if [ -n "$live" ]; then
	branches=
	mkfifo "$work/svg.in" "$work/svg.out" "$work/ff.in" "$work/ff.out"
	chown "$ruid:$rgid" "$work"/*.in "$work"/*.out
	if [ -n "$svg" ]; then
		start_svg "$work/svg.in" "$work/svg.out"
		branches="$branches --branch emit-svg=$work/svg.in,$work/svg.out"
	fi
	if [ -n "$firefox" ]; then
		start_firefox "$work/ff.in" "$work/ff.out"
		branches="$branches --branch emit-firefox=$work/ff.in,$work/ff.out"
	fi
	# shellcheck disable=SC2086
	start fanout "$work/s4" "$work/s8" $drop "$bin/fanout" $branches
	next=$work/s8
fi
start commit "$next" - $drop "$bin/commit" --output "$output" --keep-windows "$keep"

# SIGINT/SIGTERM: collect publishes the current window and stops; the rest drain.  Once
# collect has gone (a second signal, or a run that had ended by itself), fanout is told to
# stop waiting for a derived emitter that is behind (stopped, or stuck): the windows it
# holds are published at once without that emitter's files.
stops=0 ended=
stop() {
	stops=$((stops + 1))
	if [ -n "${pid_collect:-}" ] && [ "$stops" -eq 1 ] && kill -0 "$pid_collect" 2>/dev/null; then
		kill -TERM "$pid_collect" 2>/dev/null || true
	elif [ -n "${pid_fanout:-}" ]; then
		kill -TERM "$pid_fanout" 2>/dev/null || true
		# The emitters behind end too (a stopped one once continued); fanout publishes
		# without their files what they had not written.
		for e in ${pid_emit_svg:-} ${pid_emit_firefox:-}; do
			kill -TERM "$e" 2>/dev/null && kill -CONT "$e" 2>/dev/null || true
			ended="$ended $e"
		done
	fi
}
trap stop INT TERM

failed='' rcs=''
for entry in $names; do
	name=${entry%%:*} p=${entry#*:}
	while :; do
		set +e
		wait "$p" 2>/dev/null
		rc=$?
		set -e
		# A trapped signal interrupts wait with a status above 128: wait again.
		kill -0 "$p" 2>/dev/null || break
	done
	# An emitter the driver ended at a stop (SIGTERM) did as told.
	case " $ended " in *" $p "*) [ "$rc" -ne 143 ] || rc=0 ;; esac
	rcs="$rcs $name:$rc"
	# The cause is the first stage that failed other than by writing to a stage that had
	# stopped already ("Broken pipe", or killed by SIGPIPE: status 141; collect, whose
	# stderr is the driver's, exits 3 then); the stages after it only echo its failure.
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 141 ] && [ -z "$failed" ] &&
		! { [ "$name" = collect ] && [ "$rc" -eq 3 ]; } &&
		! grep -qs 'Broken pipe' "$work/err.$name"; then
		failed=$name status=$rc
	fi
done
pids=
# Warnings of the stages that succeeded, and the reason of the one that failed.
for entry in $rcs; do
	name=${entry%%:*} rc=${entry#*:}
	[ -s "$work/err.$name" ] || continue
	if [ "$rc" -eq 0 ] || [ "$name" = "$failed" ]; then
		cat "$work/err.$name" >&2
	fi
done
if [ -z "$failed" ]; then
	case " $rcs" in *:[1-9]*) err "a stage failed writing to a stage that had stopped" ;; esac
	exit 0
fi
# A stage that failed said why on its own line; one killed by a signal could not.
[ "$status" -le 128 ] || err "stage $failed was killed by signal $((status - 128))"
exit 1
